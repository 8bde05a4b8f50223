/**
 * A client that goes away (mid-stream, or while waiting for a whole reply): generation stops, the
 * upstream call is closed, and the one usage event says `cancelled` — for a stream, with what was
 * generated so far (more than nothing, less than all).
 */
import { once } from 'node:events';
import type { UsageRecordedEvent } from '@gateway/contracts';
import { createAccount, ledgerEntry, sleep, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { startExtraEdge } from '../support/processes';
import { UsageWatcher, whenRouterIsAsked } from '../support/usage-events';

describe('client abort', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  /** Output tokens of the whole reply, from a non-streamed call with the same prompt. */
  async function fullOutputTokens(model: string, prompt: string): Promise<number> {
    const completion = await openaiClient(account.masterKey).chat.completions.create({ model, messages: [{ role: 'user', content: prompt }] });
    return completion.usage!.completion_tokens;
  }

  function expectCancelled(event: UsageRecordedEvent, full: number): void {
    expect(event.status).toBe('cancelled');
    expect(event.outputTokens).toBeGreaterThan(0);
    expect(event.outputTokens).toBeLessThan(full);
    expect(event.inputTokens).toBeGreaterThan(0);
  }

  it('chat completions on sim-slow: reading three chunks then aborting records status cancelled with partial output tokens', async () => {
    const prompt = 'Tell me a long slow story';
    const full = await fullOutputTokens('sim-slow', prompt);
    expect(full).toBeGreaterThan(10);
    const requestId = newRequestId('abort-chat');
    const { data: stream, response } = await openaiClient(account.masterKey)
      .chat.completions.create({ model: 'sim-slow', messages: [{ role: 'user', content: prompt }], stream: true }, withRequestId(requestId))
      .withResponse();
    expect(response.headers.get('x-client-request-id')).toBe(requestId);
    let contentChunks = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) contentChunks++;
      if (contentChunks === 3) break; // leaving the loop aborts the HTTP request
    }
    expect(contentChunks).toBe(3);
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ clientRequestId: requestId, model: 'sim-slow', route: 'chat.completions' });
    expectCancelled(event, full);
  });

  it('responses on sim-slow: aborting the stream records status cancelled', async () => {
    const prompt = 'Another long slow story';
    const full = await fullOutputTokens('sim-slow', prompt);
    const requestId = newRequestId('abort-resp');
    const stream = await openaiClient(account.masterKey).responses.create({ model: 'sim-slow', input: prompt, stream: true }, withRequestId(requestId));
    let deltas = 0;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta' && ++deltas === 3) break;
    }
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ clientRequestId: requestId, route: 'responses' });
    expectCancelled(event, full);
  });

  it('messages on sim-slow: aborting the stream records status cancelled', async () => {
    const prompt = 'A third long slow story';
    const full = await fullOutputTokens('sim-slow', prompt);
    const requestId = newRequestId('abort-msg');
    const stream = anthropicClient(account.masterKey).messages.stream(
      { model: 'sim-slow', max_tokens: 1000, messages: [{ role: 'user', content: prompt }] },
      withRequestId(requestId),
    );
    let deltas = 0;
    await new Promise<void>((resolve) => {
      stream.on('text', () => {
        if (++deltas === 3) {
          stream.abort();
          resolve();
        }
      });
      stream.on('end', () => resolve());
    });
    await stream.done().catch(() => undefined);
    // A chunk can carry the deltas after the third: the SDK emits them before abort() takes effect.
    expect(deltas).toBeGreaterThanOrEqual(3);
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ clientRequestId: requestId, route: 'messages' });
    expectCancelled(event, full);
  });

  it('a non-streamed call on sim-slow that the client abandons is recorded as cancelled, not as an error', async () => {
    const requestId = newRequestId('abort-whole');
    const controller = new AbortController();
    const asked = await whenRouterIsAsked(requestId);
    const call = openaiClient(account.masterKey).chat.completions.create(
      { model: 'sim-slow', messages: [{ role: 'user', content: 'Take your time answering this' }] },
      { ...withRequestId(requestId), signal: controller.signal },
    );
    await asked.seen.finally(() => asked.close());
    controller.abort();
    await expect(call).rejects.toThrow();
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ clientRequestId: requestId, model: 'sim-slow', route: 'chat.completions' });
    expect(event.status).toBe('cancelled');
  });

  it.each([
    ['fake-openai-slow', 'openai'],
    ['fake-anthropic-slow', 'anthropic'],
  ] as const)('%s: the router closes the upstream call when the client goes away', async (model, kind) => {
    const mk = marker('abortup');
    const prompt = `Slowly now ${mk}`;
    const full = await fullOutputTokens(model, prompt);
    const requestId = newRequestId('abort-upstream');
    const stream = await openaiClient(account.masterKey).chat.completions.create(
      { model, messages: [{ role: 'user', content: prompt }], stream: true },
      withRequestId(requestId),
    );
    let contentChunks = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content && ++contentChunks === 3) break;
    }
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ clientRequestId: requestId, model, provider: kind });
    expectCancelled(event, full);

    // The streamed upstream request was abandoned long before the fake finished writing it.
    let streamed = (await fakeRequestsMentioning(kind, mk)).filter((request) => request.body.stream === true);
    for (let i = 0; i < 200 && !streamed[0]?.clientAborted; i++) {
      await sleep(50);
      streamed = (await fakeRequestsMentioning(kind, mk)).filter((request) => request.body.stream === true);
    }
    expect(streamed).toHaveLength(1);
    expect(streamed[0].clientAborted).toBe(true);
    expect(streamed[0].completed).toBe(false);
  });

  it('an edge that gives up waiting for the router (idle timeout) has the router stop: its client got 503, so it is an error, never charged', async () => {
    const { edge, base } = await startExtraEdge({ INFERENCE_IDLE_TIMEOUT_MS: '1000' }, 'edge-short-timeout');
    try {
      const requestId = newRequestId('timeout');
      // A whole sim-long answer takes several seconds: longer than this edge waits.
      const error = await openaiClient(account.masterKey, base)
        .chat.completions.create({ model: 'sim-long', messages: [{ role: 'user', content: 'Take all the time you need' }] }, withRequestId(requestId))
        .then(
          () => null,
          (caught: { status?: number }) => caught,
        );
      expect(error?.status).toBe(503);
      const event = await usage.single(requestId);
      expect(event).toMatchObject({ clientRequestId: requestId, model: 'sim-long', status: 'error', outputTokens: 0 });
      const entry = await ledgerEntry(account.masterKey, event.requestId);
      expect(entry).toMatchObject({ status: 'error' });
      expect(entry.credits).toBe(0);
    } finally {
      if (edge.exitCode === null) {
        const exited = once(edge, 'exit');
        edge.kill('SIGTERM');
        await exited;
      }
    }
  });
});
