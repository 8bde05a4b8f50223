import { ModelCatalog } from '@gateway/catalog';
import type { TextFrame, UsageRecordedEvent } from '@gateway/contracts';
import { firstValueFrom, toArray } from 'rxjs';
import { assertCatalogServable, createProviderAdapters } from '@gateway/providers';
import { EchoAdapter } from '@gateway/providers/testing';
import { UpstreamCaller } from '../providers/upstream-caller';
import { recordingCalls } from '../testing/recording-publisher';
import { noHeartbeats } from '../testing/no-heartbeats';
import { testSealer } from '../testing/test-sealer';
import { noStore } from '../testing/no-store';
import { InflightRequests } from './inflight-requests';
import { TextGenerationService } from './text-generation.service';

/** A catalog with one model served by the adapter registered as `echo`. */
function echoCatalog(): ModelCatalog {
  const yaml = `models:
  - id: echo-1
    pricing: { input: 0, output: 0 }
    endpoints: [chat.completions, messages]
    routes:
      - { adapter: echo, upstream_model: echo-upstream }
`;
  return ModelCatalog.fromYaml(yaml, {}, () => undefined);
}

describe('a new provider (the contributor guide example)', () => {
  const adapters = { ...createProviderAdapters({ simulatorTokenDelayMs: 0 }), echo: new EchoAdapter() };
  const upstream = new UpstreamCaller(adapters, { attemptsPerRoute: 1, baseDelayMs: 0 });
  const events: UsageRecordedEvent[] = [];
  const service = new TextGenerationService(echoCatalog(), upstream, recordingCalls(events), new InflightRequests(), noStore(), noHeartbeats(), testSealer());
  const caller = { accountId: 'a', keyId: 'k', keyType: 'master' as const, maskedKey: 'ek-...', ip: '127.0.0.1', requestId: 'req_echo' };

  it('serves a chat completion through the registered adapter, with its usage event', async () => {
    const body = { model: 'echo-1', messages: [{ role: 'user', content: 'hello, gateway' }] };
    const frames: TextFrame[] = await firstValueFrom(service.generate({ ...caller, format: 'chat', body }).pipe(toArray()));
    expect(frames).toEqual([
      {
        kind: 'json',
        status: 200,
        last: true,
        body: expect.objectContaining({
          object: 'chat.completion',
          model: 'echo-1',
          choices: [expect.objectContaining({ message: expect.objectContaining({ role: 'assistant', content: 'hello, gateway' }), finish_reason: 'stop' })],
        }),
      },
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([expect.objectContaining({ requestId: 'req_echo', model: 'echo-1', provider: 'echo', status: 'success' })]);
  });

  it('streams in the client format too', async () => {
    const body = { model: 'echo-1', stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    const frames = await firstValueFrom(service.generate({ ...caller, requestId: 'req_echo_2', format: 'messages', body }).pipe(toArray()));
    const sse = frames.flatMap((frame) => (frame.kind === 'sse' ? frame.frames : [])).join('');
    expect(sse).toContain('"text":"hi"');
    expect(sse).toContain('event: message_stop');
  });
});

describe('the router refuses at startup a catalog it cannot serve', () => {
  const adapters = { ...createProviderAdapters({ simulatorTokenDelayMs: 0 }), echo: new EchoAdapter() };
  const catalog = (route: string) =>
    ModelCatalog.fromYaml(
      `models:\n  - id: m\n    pricing: { input: 0, output: 0 }\n    endpoints: [chat.completions]\n    routes:\n      - ${route}\n`,
      {},
      () => undefined,
    );

  it('accepts the registered providers, the echo one included', () => {
    expect(() => assertCatalogServable(catalog('{ adapter: echo, upstream_model: e }'), adapters)).not.toThrow();
  });

  it('names an unknown provider and the known ones', () => {
    expect(() => assertCatalogServable(catalog('{ adapter: grpc, upstream_model: x }'), adapters)).toThrow(
      "model m: no provider named 'grpc' (known: openai, anthropic, simulator, echo)",
    );
  });

  it('wants base_url for an HTTP provider', () => {
    expect(() => assertCatalogServable(catalog('{ adapter: openai, upstream_model: x }'), adapters)).toThrow('model m: a openai route needs base_url');
  });
});
