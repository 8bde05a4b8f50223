import { classifyDecisionModel, decisionVendor, ModelCatalog } from '@gateway/catalog';
import type { TextFrame, TextGenerationRequest, UsageRecordedEvent } from '@gateway/contracts';
import { firstValueFrom, toArray } from 'rxjs';
import { SimulatorAdapter } from '@gateway/providers';
import { InflightRequests } from '../text-generation/inflight-requests';
import { TextGenerationService } from '../text-generation/text-generation.service';
import { UpstreamCaller } from '../providers/upstream-caller';
import { recordingCalls } from '../testing/recording-publisher';
import { noHeartbeats } from '../testing/no-heartbeats';
import { testSealer } from '../testing/test-sealer';
import { noStore } from '../testing/no-store';

const catalogWith = (metadata: string) =>
  ModelCatalog.fromYaml(
    `models:
  - id: jev
    pricing: { input: 0.042, output: 0 }
    endpoints: [decisions]
    ${metadata}
    routes: [{ adapter: simulator, upstream_model: sim-jev }]
  - id: sim-chat
    pricing: { input: 1, output: 1 }
    endpoints: [chat.completions, responses, messages]
    routes: [{ adapter: simulator, upstream_model: sim-chat }]
`,
    {},
    () => undefined,
  );

describe('decision model ids', () => {
  it('takes the vendor from the catalog entry, defaulting to systemone', () => {
    expect(decisionVendor(catalogWith('metadata: { vendor: acme }'))).toBe('acme');
    expect(decisionVendor(catalogWith('metadata: { vendor: "" }'))).toBe('systemone');
    expect(decisionVendor(catalogWith(''))).toBe('systemone');
    expect(decisionVendor(new ModelCatalog([]))).toBe('systemone');
  });

  it.each([
    ['jev', 'current'],
    ['jev-latest', 'current'],
    ['acme/jev', 'current'],
    ['acme/jev-latest', 'current'],
    ['jev-2025-01-01', 'pinned'],
    ['acme/jev-7', 'pinned'],
    ['acme/jev-latest-1', 'pinned'],
    ['jev-', 'other'],
    ['acme/jev-', 'other'],
    ['systemone/jev', 'other'],
    ['Jev', 'other'],
    ['acme/acme/jev', 'other'],
    ['', 'other'],
  ])('%p is %s (vendor acme)', (model, kind) => {
    expect(classifyDecisionModel(model, 'acme')).toBe(kind);
  });
});

describe('text generation with a jev model id', () => {
  const catalog = catalogWith('metadata: { vendor: systemone }');
  const simulator = new SimulatorAdapter();
  const upstream = new UpstreamCaller({ simulator, openai: simulator, anthropic: simulator }, { attemptsPerRoute: 1, baseDelayMs: 0 });
  const events: UsageRecordedEvent[] = [];
  const service = new TextGenerationService(catalog, upstream, recordingCalls(events), new InflightRequests(), noStore(), noHeartbeats(), testSealer());
  const caller = { accountId: 'a', keyId: 'k', keyType: 'master' as const, maskedKey: 'ek-...', ip: '127.0.0.1', requestId: 'r' };
  const generate = (request: Pick<TextGenerationRequest, 'format' | 'body'>): Promise<TextFrame[]> =>
    firstValueFrom(service.generate({ ...caller, ...request }).pipe(toArray()));

  it.each(['jev', 'jev-latest', 'systemone/jev', 'systemone/jev-latest', 'jev:reasoning-exclude'])(
    'refuses %p on chat completions, pointing at /v1/systemone',
    async (model) => {
      const frames = await generate({ format: 'chat', body: { model, messages: [{ role: 'user', content: 'decide' }] } });
      expect(frames).toEqual([
        {
          kind: 'json',
          status: 400,
          last: true,
          body: { error: { message: expect.stringContaining('/v1/systemone'), type: 'invalid_request_error', code: 'invalid_request', param: 'model' } },
        },
      ]);
    },
  );

  it('refuses it on responses and messages too, in their formats, before parsing the body', async () => {
    const [responses] = await generate({ format: 'responses', body: { model: 'jev', input: 'decide' } });
    expect(responses).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('/v1/systemone'), param: 'model' } } });
    const [messages] = await generate({ format: 'messages', body: { model: 'systemone/jev' } });
    expect(messages).toEqual({
      kind: 'json',
      status: 400,
      last: true,
      body: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('/v1/systemone') } },
    });
  });

  it('leaves other models alone', async () => {
    const frames = await generate({ format: 'chat', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] } });
    expect(frames[0]).toMatchObject({ kind: 'json', status: 200 });
  });
});
