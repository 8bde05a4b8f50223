import { connect, type Socket } from 'node:net';
import { api, createAccount, createProxyKey, TestAccount } from './support/api';
import { fakeRequestsMentioning, marker } from './support/clients';
import { suiteInfo } from './support/suite-info';

/** Edge B runs with BODY_TIMEOUT_MS=2000 and HEADERS_TIMEOUT_MS=1500 (global-setup.ts); Node checks every second. */
const EDGE_B_BODY_TIMEOUT_MS = 2000;

/** Milliseconds one call takes. */
async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await call();
  return { result, ms: performance.now() - started };
}

describe('no overspend by field choice: one output cap for the reservation and the upstream call', () => {
  let account: TestAccount;
  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it("reserves chat's max_completion_tokens, not max_tokens: a key whose allocation covers 1 output token but not 4096 is refused", async () => {
    // fake-openai prices output at 2 credits per million: 4096 tokens are 0.008 credits, 1 token 0.000002.
    const proxy = await createProxyKey(account.masterKey, { allocated_ammount: 0.005 });
    const tag = marker('cap');
    const response = await api('POST', '/v1/chat/completions', {
      key: proxy.key,
      body: { model: 'fake-openai', messages: [{ role: 'user', content: tag }], max_tokens: 1, max_completion_tokens: 4096 },
    });
    expect(response.status).toBe(402);
    expect(await fakeRequestsMentioning('openai', tag)).toHaveLength(0);
  });

  it('asks the upstream for no more than the reserved cap, whichever fields the body combines', async () => {
    const tag = marker('cap');
    const both = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'fake-openai', messages: [{ role: 'user', content: `${tag} both` }], max_tokens: 1, max_completion_tokens: 4096 },
    });
    expect(both.status).toBe(200);
    // A cap field of another format (max_tokens on /v1/responses) reserves nothing: the model's cap (1024) is reserved and sent.
    const foreign = await api('POST', '/v1/responses', {
      key: account.masterKey,
      body: { model: 'fake-openai', input: `${tag} foreign`, max_tokens: 1 },
    });
    expect(foreign.status).toBe(200);
    expect(foreign.body.max_output_tokens).toBeNull();
    const none = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'fake-openai', messages: [{ role: 'user', content: `${tag} none` }] },
    });
    expect(none.status).toBe(200);
    const sent = async (label: string) =>
      (await fakeRequestsMentioning('openai', `${tag} ${label}`)).map((request) => (request.body as { max_tokens?: number }).max_tokens);
    expect(await sent('both')).toEqual([4096]);
    expect(await sent('foreign')).toEqual([1024]);
    expect(await sent('none')).toEqual([1024]);
  });

  it('answers 400, not 429, for a request that can never fit the plan’s tokens per minute', async () => {
    const basic = createAccount('basic', '100'); // 150,000 tokens per minute
    const response = await api('POST', '/v1/chat/completions', {
      key: basic.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200_000 },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.body.error.message).toContain('150000 tokens per minute');
    expect(response.body.error.message).toContain('never fit');
  });
});

describe('bounded work per request', () => {
  let account: TestAccount;
  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('answers or refuses a 1 MB single-character prompt on every text route within 2 s, while /healthz keeps answering', async () => {
    const prompt = 'x'.repeat(1_000_000);
    const calls = [
      () =>
        api('POST', '/v1/chat/completions', {
          key: account.masterKey,
          body: { model: 'sim-chat', messages: [{ role: 'user', content: prompt }], max_tokens: 8 },
        }),
      () => api('POST', '/v1/responses', { key: account.masterKey, body: { model: 'sim-chat', input: prompt, max_output_tokens: 8 } }),
      () => api('POST', '/v1/messages', { key: account.masterKey, body: { model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: prompt }] } }),
      () => api('POST', '/v1/embeddings', { key: account.masterKey, body: { input: prompt } }),
      () => api('POST', '/v1/moderations', { key: account.masterKey, body: { input: prompt } }),
    ];
    const heavy = calls.map((call) => timed(call));
    // Probes sent while the heavy requests are being counted: a blocked event loop would hold them back as long.
    const probes = Array.from({ length: 5 }, () => timed(() => fetch(`${suiteInfo().edgeA}/healthz`).then((response) => response.status)));
    for (const { result, ms } of await Promise.all(heavy)) {
      expect(result.status).toBeLessThan(500);
      expect(ms).toBeLessThan(2000);
    }
    for (const { result, ms } of await Promise.all(probes)) {
      expect(result).toBe(200);
      expect(ms).toBeLessThan(2000);
    }
  });

  it('refuses JSON nested deeper than the limit with a 400 naming it, on every kind of route', async () => {
    const deep = (levels: number) => `{"a":${'['.repeat(levels)}1${']'.repeat(levels)}}`;
    const proxy = await createProxyKey(account.masterKey);
    const routes = [
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/responses',
      '/v1/auth/proxy/create',
      '/v1/auth/proxy/update',
      '/v1/moderations',
      '/v1/images/generations',
      '/v1/systemone',
    ];
    for (const route of routes) {
      const response = await api('POST', route, { key: account.masterKey, rawBody: deep(1300) });
      expect({ route, status: response.status }).toEqual({ route, status: 400 });
      expect(response.text).toContain('64 levels');
    }
    // Within the limit the body is read as usual (and refused for what it says, not how deep it is).
    const shallow = await api('POST', '/v1/auth/proxy/update', {
      key: account.masterKey,
      body: { proxy_key: proxy.key, name: 'ok', extra: JSON.parse(deep(50)) },
    });
    expect(shallow.text).not.toContain('levels');
  });

  it.each([
    ['since=8640000000001'],
    ['until=8640000000001'],
    ['since=1e300'],
    ['until=1e300'],
    ['since=-1'],
    ['since=1.5'],
    ['since=1&since=2'],
    // Numbers only in decimal digits: not 1000 written another way, not an empty value taken as 0.
    ['since=1e3'],
    ['until=0x3e8'],
    ['limit=1e1'],
    ['since='],
    ['limit=%2010'],
  ])('refuses GET /v1/user/logs?%s with a 400 naming the parameter', async (query) => {
    const response = await api('GET', `/v1/user/logs?${query}`, { key: account.masterKey });
    expect(response.status).toBe(400);
    expect(response.text).toContain(query.split('=')[0]);
  });

  it.each([['from=1e3'], ['to=1e10'], ['from=']])('refuses GET /v1/user/usage?%s with a 400 naming the parameter', async (query) => {
    const response = await api('GET', `/v1/user/usage?${query}`, { key: account.masterKey });
    expect(response.status).toBe(400);
    expect(response.text).toContain(query.split('=')[0]);
  });

  it('takes integers written in decimal digits', async () => {
    expect((await api('GET', '/v1/user/logs?since=1000&until=253402300799&limit=10', { key: account.masterKey })).status).toBe(200);
    const to = Math.floor(Date.now() / 1000);
    expect((await api('GET', `/v1/user/usage?from=${to - 86_400}&to=${to}`, { key: account.masterKey })).status).toBe(200);
  });
});

describe('URLs the gateway cannot read', () => {
  let account: TestAccount;
  beforeAll(() => {
    account = createAccount('pro', '1');
  });

  it.each([['/v1/a%ZZ'], ['/v1/chat/completions%'], ['/console/assets/a%ZZ.js']])(
    'refuses %s with a 400 in the error shape, with a request id',
    async (path) => {
      const response = await api('GET', path, { key: account.masterKey });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
      expect(response.body.error.message).toContain('URL');
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    },
  );
});

describe('slow bodies', () => {
  /** Opens a raw connection to edge B, writes `head`, and resolves with what came back and when the socket closed. */
  function slowClient(head: string): Promise<{ answer: string; closedAfterMs: number }> {
    const { edgeB } = suiteInfo();
    const url = new URL(edgeB);
    return new Promise((resolve, reject) => {
      const socket: Socket = connect(Number(url.port), url.hostname);
      let answer = '';
      const started = performance.now();
      socket.setEncoding('utf8');
      socket.on('connect', () => socket.write(head));
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve({ answer, closedAfterMs: performance.now() - started }));
    });
  }

  const request = (headers: string) =>
    `POST /v1/chat/completions HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer sk-none\r\nContent-Type: application/json\r\n${headers}\r\n`;
  // The bound plus one check interval, with room for a loaded machine; the socket would stay open forever without the bound.
  const CLOSED_WITHIN_MS = EDGE_B_BODY_TIMEOUT_MS + 1000 + 5000;

  it('closes a body that stops after 8 of 1000 announced bytes, with 408', async () => {
    const { answer, closedAfterMs } = await slowClient(`${request('Content-Length: 1000\r\n')}{"model"`);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(EDGE_B_BODY_TIMEOUT_MS - 100);
    expect(closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
  });

  it('closes an unfinished chunked body', async () => {
    const { answer, closedAfterMs } = await slowClient(`${request('Transfer-Encoding: chunked\r\n')}8\r\n{"model"\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
  });

  it('closes a connection whose headers never end (slowloris)', async () => {
    const { closedAfterMs } = await slowClient('GET /v1/models HTTP/1.1\r\nHost: edge\r\nX-Slow: 1\r\n');
    expect(closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
  });
});
