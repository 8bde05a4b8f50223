/**
 * SIGTERM drains a process before it exits: the router stops taking requests (NATS queue group
 * subscriptions drained) but finishes the streams it serves; the edge reports not-ready, refuses
 * new requests with a 503 that carries the request id, and finishes its open streams. Each test
 * starts a replacement, so the tests that follow have a full suite.
 */
import { api, createAccount, ledgerEntry, TestAccount } from '../support/api';
import { isRunning, replaceEdge, replaceService, waitForExit, waitForStatus } from '../support/processes';
import { suiteInfo } from '../support/suite-info';

/** A streamed chat whose body is read as it arrives. */
class OpenStream {
  private text = '';
  private ended = false;
  private waiters: (() => void)[] = [];
  private readonly done: Promise<void>;

  private constructor(readonly response: Response) {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      try {
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          this.text += decoder.decode(read.value, { stream: true });
          this.wake();
        }
      } finally {
        this.ended = true;
        this.wake();
      }
    })();
  }

  static async open(base: string, key: string, body: Record<string, unknown>): Promise<OpenStream> {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    return new OpenStream(response);
  }

  /** Resolves once `count` content deltas have arrived. */
  async contentDeltas(count: number): Promise<void> {
    while (this.deltas().length < count) {
      if (this.ended) throw new Error(`the stream ended after ${this.deltas().length} deltas`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async finished(): Promise<string> {
    await this.done;
    return this.text;
  }

  chunks(): any[] {
    return this.text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)));
  }

  deltas(): string[] {
    return this.chunks()
      .map((chunk) => chunk.choices?.[0]?.delta?.content)
      .filter((content): content is string => typeof content === 'string' && content.length > 0);
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/** sim-slow writes a token every 40 ms: 60 tokens keep a stream open for a few seconds. */
const SLOW_STREAM = { model: 'sim-slow', messages: [{ role: 'user', content: 'Tell me a long slow story' }], max_tokens: 60 };

describe('graceful shutdown', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('a router sent SIGTERM mid-stream takes no new requests but completes the stream, then exits', async () => {
    const { services, edgeA } = suiteInfo();
    const router = services['inference-router'];
    const stream = await OpenStream.open(edgeA, account.masterKey, SLOW_STREAM);
    expect(stream.response.status).toBe(200);
    await stream.contentDeltas(2);

    process.kill(router.pid, 'SIGTERM');
    // Draining: its NATS subscriptions are gone, so readiness fails and new requests find no router.
    expect(await waitForStatus(`http://127.0.0.1:${router.healthPort}/readyz`, 503)).toMatchObject({ ready: false, draining: true });
    const refused = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Anyone there?' }] },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.request_id).toBe(refused.headers.get('x-request-id'));

    const text = await stream.finished();
    expect(stream.chunks().at(-1).choices[0].finish_reason).toEqual(expect.any(String));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(stream.deltas().length).toBeGreaterThan(10);
    await waitForExit(router.pid);
    // Its usage event, published after the stream's last frame, went out before the router exited:
    // one ledger entry with the tokens the client was sent.
    const entry = await ledgerEntry(account.masterKey, stream.response.headers.get('x-request-id') as string);
    expect(entry).toMatchObject({ status: 'success', model: 'sim-slow', output_tokens: stream.chunks().at(-1).usage?.completion_tokens ?? expect.any(Number) });
    expect(entry.output_tokens).toBeGreaterThanOrEqual(stream.deltas().length);

    await replaceService('inference-router');
    const after = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Back again?' }] },
    });
    expect(after.status).toBe(200);
  });

  it('an edge sent SIGTERM mid-stream reports not ready, refuses new requests with 503, finishes the stream, then exits', async () => {
    const { edgeB, edges } = suiteInfo();
    const edge = edges['edge-b'];
    const stream = await OpenStream.open(edgeB, account.masterKey, SLOW_STREAM);
    expect(stream.response.status).toBe(200);
    await stream.contentDeltas(2);

    process.kill(edge.pid, 'SIGTERM');
    expect(await waitForStatus(`${edgeB}/readyz`, 503)).toMatchObject({ ready: false, draining: true });
    const refused = await api('GET', '/v1/models', { key: account.masterKey, base: edgeB, headers: { 'x-request-id': 'drain-refused-1' } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('connection')).toBe('close');
    expect(refused.body).toEqual({
      error: { message: expect.stringMatching(/shutting down/), type: 'service_unavailable_error', code: 'service_unavailable', param: null },
      request_id: refused.headers.get('x-request-id'),
    });
    expect(refused.headers.get('x-client-request-id')).toBe('drain-refused-1');

    const text = await stream.finished();
    expect(stream.chunks().at(-1).choices[0].finish_reason).toEqual(expect.any(String));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    await waitForExit(edge.pid);
    expect(isRunning(edge.pid)).toBe(false);

    await replaceEdge('edge-b');
    expect((await api('GET', '/v1/models', { key: account.masterKey, base: edgeB })).status).toBe(200);
  });
});
