/**
 * A streaming client that stops reading: the edge queues what the router keeps sending (the router
 * finishes, its usage is recorded), and when the client reads again it gets every byte, in order,
 * the same answer a client that read at once got. The stream is several megabytes, more than the
 * sockets between edge and client hold, so the edge itself has to queue its frames (it copies a raw
 * frame's bytes out of the NATS read they arrived in when the client is behind). Up to a bound:
 * past `STREAM_CLIENT_BACKLOG_BYTES` unread (1 MiB on the suite's second edge) the client is cut
 * off, as if it had left, and billed once.
 */
import { request, type IncomingMessage } from 'node:http';
import { createAccount, ledgerEntry, sleep, TestAccount } from '../support/api';
import { scrape, valueOf } from '../support/prometheus';
import { suiteInfo } from '../support/suite-info';

// The fake upstream echoes the prompt one word per chunk: 40,000 chunks, megabytes of events.
const prompt = Array.from({ length: 40_000 }, (_, i) => `w${i}`).join(' ');
const body = JSON.stringify({ model: 'fake-openai-huge', stream: true, messages: [{ role: 'user', content: prompt }] });

/**
 * Starts the streaming request; resolves with the response once its headers are in. On a connection
 * of its own: one kept alive from an eager read has a receive window grown to hold megabytes.
 */
function start(key: string, base = suiteInfo().edgeA): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const call = request(`${base}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    call.on('response', resolve);
    call.on('error', reject);
    call.end(body);
  });
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', reject);
  });
}

/** Whatever arrives until the connection closes, and whether the response was whole. */
function readUntilClosed(response: IncomingMessage): Promise<{ received: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('error', () => undefined); // `aborted`: the close says it
    response.on('close', () => resolve({ received: Buffer.concat(chunks), complete: response.complete }));
  });
}

const cutOff = async (): Promise<number> =>
  valueOf((await scrape(`${suiteInfo().edgeB}/metrics`)).text, 'gateway_stream_clients_cut_total', { route: '/v1/chat/completions' });

/** The content of a chat stream's chunks, joined; throws on an event that is not a chunk's JSON. */
function content(stream: string): { text: string; events: number } {
  const events = stream.split('\n\n').filter((event) => event.length > 0);
  expect(events[events.length - 1]).toBe('data: [DONE]');
  let text = '';
  for (const event of events.slice(0, -1)) {
    expect(event.startsWith('data: ')).toBe(true);
    const chunk = JSON.parse(event.slice('data: '.length)) as { object: string; choices: { delta?: { content?: string } }[] };
    expect(chunk.object).toBe('chat.completion.chunk');
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  return { text, events: events.length };
}

describe('a streaming client that stops reading', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('enterprise', '100');
  });

  it('gets every byte once it reads again, the same answer as a client that read at once, and is billed once', async () => {
    const eager = await start(account.masterKey);
    expect(eager.statusCode).toBe(200);
    const expected = content((await readAll(eager)).toString('utf8'));
    expect(expected.text).toContain(prompt);

    const slow = await start(account.masterKey);
    expect(slow.statusCode).toBe(200);
    const requestId = slow.headers['x-request-id'] as string;
    slow.pause();
    // The router finishes while the client reads nothing: the rest of the answer waits at the edge.
    const entry = await ledgerEntry(account.masterKey, requestId, { timeoutMs: 60_000 });
    expect(entry).toMatchObject({ request_id: requestId, status: 'success' });
    slow.resume();
    const received = await readAll(slow);
    expect(received.length).toBeGreaterThan(5_000_000);
    const got = content(received.toString('utf8'));
    expect(got.events).toBe(expected.events);
    expect(got.text).toBe(expected.text);
  }, 120_000);

  it('is cut off once more than STREAM_CLIENT_BACKLOG_BYTES wait unread, and billed once', async () => {
    const before = await cutOff();
    const eager = await start(account.masterKey, suiteInfo().edgeB);
    const whole = (await readAll(eager)).length;

    const slow = await start(account.masterKey, suiteInfo().edgeB);
    expect(slow.statusCode).toBe(200);
    const requestId = slow.headers['x-request-id'] as string;
    slow.pause();
    for (let waited = 0; (await cutOff()) === before; waited += 100) {
      if (waited > 60_000) throw new Error('the edge never cut the client off');
      await sleep(100);
    }
    expect(await cutOff()).toBe(before + 1);
    // Billed once: cancelled when the cut stopped the upstream call, whole when it had finished.
    const entry = await ledgerEntry(account.masterKey, requestId, { timeoutMs: 60_000 });
    expect(['cancelled', 'success']).toContain(entry.status);
    expect(entry.output_tokens).toBeGreaterThan(0);
    slow.resume();
    const { received, complete } = await readUntilClosed(slow);
    expect(complete).toBe(false);
    expect(received.length).toBeLessThan(whole);
    expect(received.toString('utf8')).not.toContain('data: [DONE]');
  }, 120_000);
});
