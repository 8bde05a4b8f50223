/**
 * The edge writes one JSON line per request (request id, trace id, method, route pattern, model,
 * status, latency, key type, masked key) and never a full key; every 5xx body — and a stream's
 * in-stream error event — carries the request id the client can quote.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { api, createAccount, createProxyKey, sleep, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';

const newRequestId = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

/** The edge-a log line of a request (by the gateway's request id or the client's own), once written. */
async function requestLine(requestId: string): Promise<Record<string, unknown>> {
  const file = join(suiteInfo().logDir, 'edge-a.log');
  for (let i = 0; i < 100; i++) {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => (entry.request_id === requestId || entry.client_request_id === requestId) && entry.msg === 'request completed');
    if (line) return line;
    await sleep(100);
  }
  throw new Error(`no log line for ${requestId}`);
}

/** The `data:` payloads of an SSE body. */
const events = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)));

describe('request logs and request ids', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('logs one JSON line per request with the masked key, the trace id and the route pattern', async () => {
    const requestId = newRequestId('log');
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      headers: { 'x-request-id': requestId },
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'log me' }], max_tokens: 10 },
    });
    expect(response.status).toBe(200);
    const line = await requestLine(requestId);
    expect(line).toMatchObject({
      level: 'info',
      service: 'edge-gateway',
      request_id: response.headers.get('x-request-id'),
      client_request_id: requestId,
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      method: 'POST',
      route: '/v1/chat/completions',
      model: 'sim-chat',
      status: 200,
      latency_ms: expect.any(Number),
      key_type: 'master',
      key: `ek-...${account.masterKey.slice(-4)}`,
    });
  });

  it('logs a legacy proxy-key lookup by its route pattern, and no log line anywhere holds a key', async () => {
    const proxy = await createProxyKey(account.masterKey, { name: 'logged' });
    const requestId = newRequestId('legacy');
    const response = await api('GET', `/v1/auth/proxy/${proxy.key}`, { key: account.masterKey, headers: { 'x-request-id': requestId } });
    expect(response.status).toBe(200);
    const line = await requestLine(requestId);
    expect(line.route).toBe('/v1/auth/proxy/:proxy_key');
    // Every log of the run, those of set-ups that keep theirs in a folder of their own included.
    const dir = suiteInfo().logDir;
    const files = (readdirSync(dir, { recursive: true }) as string[]).map((file) => join(dir, file)).filter((file) => statSync(file).isFile());
    const logs = files.map((file) => readFileSync(file, 'utf8'));
    for (const secret of [account.masterKey, proxy.key]) {
      expect(logs.some((text) => text.includes(secret))).toBe(false);
    }
  });

  it('puts the request id in a 5xx body', async () => {
    const requestId = newRequestId('five');
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      headers: { 'x-request-id': requestId },
      body: { model: 'broken-chat', messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(response.status).toBe(502);
    const gatewayId = response.headers.get('x-request-id')!;
    expect(response.body).toMatchObject({ error: { type: expect.any(String) }, request_id: gatewayId });
    expect(await requestLine(requestId)).toMatchObject({ status: 502, request_id: gatewayId, client_request_id: requestId });
  });

  it('puts the request id in the error event of a stream that fails after it started', async () => {
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'cut-off-openai', messages: [{ role: 'user', content: 'Tell me everything' }], stream: true }],
      ['/v1/responses', { model: 'cut-off-openai', input: 'Tell me everything', stream: true }],
      ['/v1/messages', { model: 'cut-off-anthropic', max_tokens: 100, messages: [{ role: 'user', content: 'Tell me everything' }], stream: true }],
    ] as const) {
      const requestId = newRequestId('cut');
      const response = await api('POST', path, { key: account.masterKey, headers: { 'x-request-id': requestId }, body });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      const last = events(response.text).at(-1);
      expect({ path, request_id: last.request_id }).toEqual({ path, request_id: response.headers.get('x-request-id') });
      expect(response.headers.get('x-client-request-id')).toBe(requestId);
    }
  });

  it("a client that closes on the stream's last event (Codex on response.completed) was served: logged 200, never cancelled", async () => {
    const requestId = newRequestId('close-on-last');
    const controller = new AbortController();
    const response = await fetch(`${suiteInfo().edgeA}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.masterKey}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'sim-chat', input: 'close as soon as you are done', stream: true }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"type":"response.completed"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    expect(text).toContain('"type":"response.completed"');
    expect(await requestLine(requestId)).toMatchObject({ status: 200 });
  });
});
