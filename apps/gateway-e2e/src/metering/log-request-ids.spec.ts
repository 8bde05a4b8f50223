/** `/v1/user/logs` joined to requests: each entry carries the `x-request-id` its client got, and can be asked for by it. */
import { randomUUID } from 'node:crypto';
import { api, ApiResponse, createAccount, createProxyKey, sleep, TestAccount } from '../support/api';

const PRICE = { input: 0.5, output: 1.5 }; // sim-chat, credits per million tokens (config/models.yaml)

const chat = (key: string, content: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/v1/chat/completions', { key, body: { model: 'sim-chat', messages: [{ role: 'user', content }], ...extra } });

const requestIdOf = (response: ApiResponse): string => {
  const id = response.headers.get('x-request-id');
  if (!id) throw new Error('no x-request-id');
  return id;
};

const byRequestId = (key: string, requestId: string, extra = '') => api('GET', `/v1/user/logs?request_id=${requestId}${extra}`, { key });

/** Polls until metering (asynchronous) has recorded the request, then returns the page. */
async function entriesFor(key: string, requestId: string, attempts = 100): Promise<any[]> {
  let response: ApiResponse | undefined;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(100);
    response = await byRequestId(key, requestId);
    expect(response.status).toBe(200);
    if (Array.isArray(response.body) && response.body.length > 0) return response.body;
  }
  throw new Error(`request ${requestId} never reached the ledger: ${response?.text.slice(0, 300)}`);
}

describe('metering: log entries by request id', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '50');
  });

  it('shows the x-request-id in the entry, and request_id= returns exactly that entry', async () => {
    const first = await chat(owner.masterKey, 'which entry is mine?');
    expect(first.status).toBe(200);
    const second = await chat(owner.masterKey, 'another one', { stream: true, stream_options: { include_usage: true } });
    expect(second.status).toBe(200);
    const firstId = requestIdOf(first);
    const secondId = requestIdOf(second);
    expect(firstId).not.toBe(secondId);

    const entries = await entriesFor(owner.masterKey, firstId);
    const usage = first.body.usage;
    expect(entries).toEqual([
      {
        request_id: firstId,
        key: `ek-...${owner.masterKey.slice(-4)}`,
        key_id: expect.any(String),
        model: 'sim-chat',
        route: 'chat.completions',
        credits: expect.any(Number),
        timestamp: expect.any(Number),
        status: 'success',
        ip: '127.0.0.1',
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    ]);
    const cost = (usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output) / 1_000_000;
    expect(Math.abs(entries[0].credits - cost)).toBeLessThan(1e-12);
    const streamed = await entriesFor(owner.masterKey, secondId);
    expect(streamed).toEqual([expect.objectContaining({ request_id: secondId, route: 'chat.completions', status: 'success' })]);

    // The same entries as the unfiltered listing shows, and combined with other filters as an AND.
    const all = (await api('GET', '/v1/user/logs?limit=500', { key: owner.masterKey })).body as any[];
    expect(all.find((entry) => entry.request_id === firstId)).toEqual(entries[0]);
    expect((await byRequestId(owner.masterKey, firstId, '&status=success&model=sim-chat')).body).toEqual(entries);
    expect((await byRequestId(owner.masterKey, firstId, '&status=error')).body).toEqual([]);
  });

  it("gives an empty page, 200, for another account's request and for an id nobody was given", async () => {
    const response = await chat(owner.masterKey, 'private');
    const requestId = requestIdOf(response);
    await entriesFor(owner.masterKey, requestId);
    const stranger = createAccount('pro', '5');
    const foreign = await byRequestId(stranger.masterKey, requestId);
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual([]);
    const unknown = await byRequestId(owner.masterKey, `req_${randomUUID().replace(/-/g, '')}`);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual([]);
  });

  it('lets a proxy key find only its own requests; the master key finds every request of the account', async () => {
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 5 });
    const fromProxy = requestIdOf(await chat(proxy.key, 'from the proxy key'));
    const fromMaster = requestIdOf(await chat(owner.masterKey, 'from the master key'));
    expect(await entriesFor(proxy.key, fromProxy)).toEqual([expect.objectContaining({ request_id: fromProxy, key: `ek-proxy-...${proxy.key.slice(-4)}` })]);
    expect(await entriesFor(owner.masterKey, fromProxy)).toEqual([expect.objectContaining({ request_id: fromProxy })]);
    await entriesFor(owner.masterKey, fromMaster);
    expect((await byRequestId(proxy.key, fromMaster)).body).toEqual([]);
  });

  it('carries the request id of a Messages request too', async () => {
    const response = await api('POST', '/v1/messages', {
      headers: { 'x-api-key': owner.masterKey },
      body: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBe(200);
    const requestId = requestIdOf(response);
    expect(await entriesFor(owner.masterKey, requestId)).toEqual([
      expect.objectContaining({
        request_id: requestId,
        route: 'messages',
        input_tokens: response.body.usage.input_tokens,
        output_tokens: response.body.usage.output_tokens,
      }),
    ]);
  });
});
