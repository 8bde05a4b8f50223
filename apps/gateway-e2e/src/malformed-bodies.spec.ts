import { connect } from 'node:net';
import { api, createAccount, createProxyKey, TestAccount } from './support/api';
import { suiteInfo } from './support/suite-info';

interface Case {
  name: string;
  rawBody?: string;
  body?: unknown;
  contentType?: string;
  /** The field the message must name, when there is one. */
  field?: string;
}

const HUGE = 'x'.repeat(200_000);

/** Bodies no route may answer with a 500, each paired with the field its message names. */
function casesFor(route: string, proxyKey: string): Case[] {
  const generic: Case[] = [
    { name: 'not JSON', rawBody: '{"name": ' },
    { name: 'empty object', body: {} },
    { name: 'JSON array', rawBody: '[1,2,3]' },
    { name: 'JSON string', rawBody: '"hello"' },
    { name: 'JSON number', rawBody: '42' },
    { name: 'JSON null', rawBody: 'null' },
    { name: '__proto__ key', rawBody: '{"__proto__": {"admin": true}, "name": "x"}' },
    { name: 'nested __proto__ key', rawBody: '{"name": "x", "model_whitelist": [{"__proto__": {"a": 1}}]}' },
    { name: 'constructor.prototype', rawBody: '{"constructor": {"prototype": {"a": 1}}}' },
    { name: 'wrong content type', rawBody: 'name=x', contentType: 'text/plain' },
    { name: 'form body', rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' },
  ];
  const keyed = (extra: Record<string, unknown>) => ({ proxy_key: proxyKey, ...extra });
  switch (route) {
    case '/v1/auth/proxy/create':
      return [
        ...generic,
        { name: 'name too long', body: { name: 'n'.repeat(26), allocated_ammount: 1 }, field: 'name' },
        { name: 'huge name', body: { name: HUGE, allocated_ammount: 1 }, field: 'name' },
        { name: 'empty name', body: { name: '', allocated_ammount: 1 }, field: 'name' },
        { name: 'name is a number', body: { name: 5, allocated_ammount: 1 }, field: 'name' },
        { name: 'name is null', body: { name: null, allocated_ammount: 1 }, field: 'name' },
        { name: 'negative allocation', body: { name: 'a', allocated_ammount: -1 }, field: 'allocated_ammount' },
        { name: 'allocation as string', body: { name: 'a', allocated_ammount: '5' }, field: 'allocated_ammount' },
        { name: 'allocation missing', body: { name: 'a' }, field: 'allocated_ammount' },
        // Above every daily limit: the spec's daily-limit detail, however large (issue #11).
        { name: 'allocation 1e308', body: { name: 'a', allocated_ammount: 1e308 }, field: 'Allocated ammount cannot exceed your daily limit of 10000' },
        { name: 'expires_at in the past', body: { name: 'a', allocated_ammount: 1, expires_at: 1000 }, field: 'expires_at' },
        { name: 'expires_at fractional', body: { name: 'a', allocated_ammount: 1, expires_at: 99999999999.5 }, field: 'expires_at' },
        { name: 'expires_at string', body: { name: 'a', allocated_ammount: 1, expires_at: 'never' }, field: 'expires_at' },
        { name: 'model_whitelist not an array', body: { name: 'a', allocated_ammount: 1, model_whitelist: 'gpt' }, field: 'model_whitelist' },
        { name: 'model_whitelist of numbers', body: { name: 'a', allocated_ammount: 1, model_whitelist: [1] }, field: 'model_whitelist' },
        { name: 'bad CIDR', body: { name: 'a', allocated_ammount: 1, ip_whitelist: ['10.0.0.0/33'] }, field: 'ip_whitelist' },
        { name: 'bad IP', body: { name: 'a', allocated_ammount: 1, ip_whitelist: ['300.1.1.1'] }, field: 'ip_whitelist' },
        { name: 'shorthand IPv4 (127.1)', body: { name: 'a', allocated_ammount: 1, ip_whitelist: ['127.1'] }, field: 'ip_whitelist' },
        { name: 'IP of wrong type', body: { name: 'a', allocated_ammount: 1, ip_whitelist: [127001] }, field: 'ip_whitelist' },
        { name: 'unknown spend window', body: { name: 'a', allocated_ammount: 1, spend_window: 'yearly' }, field: 'spend_window' },
        { name: 'too many whitelist entries', body: { name: 'a', allocated_ammount: 1, model_whitelist: Array(300).fill('m') }, field: 'model_whitelist' },
      ];
    case '/v1/auth/proxy/update':
      return [
        ...generic,
        { name: 'proxy_key missing', body: { name: 'a' }, field: 'proxy_key' },
        { name: 'proxy_key empty', body: { proxy_key: '' }, field: 'proxy_key' },
        { name: 'proxy_key too long', body: { proxy_key: 'k'.repeat(257) }, field: 'proxy_key' },
        { name: 'proxy_key huge', body: { proxy_key: HUGE }, field: 'proxy_key' },
        { name: 'proxy_key a number', body: { proxy_key: 12 }, field: 'proxy_key' },
        { name: 'name too long', body: keyed({ name: 'n'.repeat(26) }), field: 'name' },
        { name: 'name null', body: keyed({ name: null }), field: 'name' },
        { name: 'negative allocation', body: keyed({ allocated_ammount: -0.01 }), field: 'allocated_ammount' },
        { name: 'unknown spend window', body: keyed({ spend_window: 'hourly' }), field: 'spend_window' },
        { name: 'bad CIDR', body: keyed({ ip_whitelist: ['fe80::/200'] }), field: 'ip_whitelist' },
        { name: 'whitelist null', body: keyed({ model_whitelist: null }), field: 'model_whitelist' },
      ];
    default:
      return [
        ...generic,
        { name: 'proxy_key missing', body: {}, field: 'proxy_key' },
        { name: 'proxy_key too long', body: { proxy_key: 'k'.repeat(257) }, field: 'proxy_key' },
        { name: 'proxy_key an object', body: { proxy_key: { $ne: null } }, field: 'proxy_key' },
        { name: 'proxy_key an array', body: { proxy_key: [proxyKey] }, field: 'proxy_key' },
      ];
  }
}

const ROUTES = ['/v1/auth/proxy/create', '/v1/auth/proxy/update', '/v1/auth/proxy/lookup', '/v1/auth/proxy/toggle', '/v1/auth/proxy/remove'];

describe('malformed bodies on the key routes', () => {
  let owner: TestAccount;
  let proxyKey: string;

  beforeAll(async () => {
    owner = createAccount('enterprise', '10');
    proxyKey = (await createProxyKey(owner.masterKey)).key;
  });

  for (const route of ROUTES) {
    it(`${route}: every bad body gets a 4xx {detail} naming the field, never a 500`, async () => {
      for (const testCase of casesFor(route, proxyKey)) {
        const response = await api('POST', route, {
          key: owner.masterKey,
          body: testCase.body,
          rawBody: testCase.rawBody,
          headers: testCase.contentType ? { 'content-type': testCase.contentType } : undefined,
        });
        const context = `${route} / ${testCase.name}: ${response.status} ${response.text.slice(0, 200)}`;
        expect({ context, ok: response.status >= 400 && response.status < 500 }).toEqual({ context, ok: true });
        expect({ context, detail: typeof response.body?.detail }).toEqual({ context, detail: 'string' });
        if (testCase.field) expect({ context, names: response.body.detail.includes(testCase.field) }).toEqual({ context, names: true });
      }
      // Nothing was written by any of them: the key is as created.
      const record = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxyKey } });
      expect(record.body).toMatchObject({ name: 'test key', is_active: true, allocated_ammount: 5, ip_whitelist: [] });
      expect((await api('GET', '/v1/auth/proxy', { key: owner.masterKey })).body).toHaveLength(1);
    });
  }

  it('a body over the size limit is refused with 413 before it is read', async () => {
    // The edge answers from the declared length without reading the body, so the client only has to
    // send the headers: a full 11 MiB upload would race the early answer (fetch reports EPIPE).
    const response = await rawExchange(
      '/v1/auth/proxy/create',
      { authorization: `Bearer ${owner.masterKey}`, 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) },
      '{"name": "',
    );
    expect(response.status).toBe(413);
    expect(typeof JSON.parse(response.body).detail).toBe('string');
  });

  it('says what is wrong with a field: a wrong type as such, a missing field as required (not its length rule)', async () => {
    const detail = async (route: string, body: unknown) => (await api('POST', route, { key: owner.masterKey, body })).body.detail;
    expect(await detail('/v1/auth/proxy/create', { name: 'a', allocated_ammount: 1, model_whitelist: [null] })).toBe(
      'each value in model_whitelist must be a string',
    );
    expect(await detail('/v1/auth/proxy/create', { name: 'a', allocated_ammount: 1, model_whitelist: [7] })).toBe(
      'each value in model_whitelist must be a string',
    );
    expect(await detail('/v1/auth/proxy/update', { name: 'a' })).toBe('proxy_key is required');
    expect(await detail('/v1/auth/proxy/lookup', {})).toBe('proxy_key is required');
    expect(await detail('/v1/auth/proxy/toggle', { proxy_key: 12 })).toBe('proxy_key must be a string');
    expect(await detail('/v1/auth/proxy/create', { allocated_ammount: 1 })).toBe('name is required');
    expect(await detail('/v1/auth/proxy/create', { name: 5, allocated_ammount: 1 })).toBe('name must be a string');
    expect(await detail('/v1/auth/proxy/create', { name: 'a' })).toBe('allocated_ammount is required');
    expect(await detail('/v1/auth/proxy/update', { proxy_key: proxyKey, name: null })).toBe('name must be a string');
    const missing = await api('GET', '/v1/auth/proxy/', { key: owner.masterKey });
    expect(missing.body.detail).toBe('proxy_key is required');
  });

  it('a body over BODY_LIMIT_BYTES on an OpenAI-style route is a 413 with code request_too_large', async () => {
    const response = await rawExchange(
      '/v1/chat/completions',
      { authorization: `Bearer ${owner.masterKey}`, 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) },
      '{"model": "sim-chat", "messages": [',
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
  });

  it('a legacy path key longer than 256 characters is a 400 naming proxy_key', async () => {
    const response = await api('POST', `/v1/auth/proxy/toggle/${'k'.repeat(300)}`, { key: owner.masterKey });
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/proxy_key/);
  });
});

/** Sends a request's head and the start of its body over a plain socket and reads one response. */
function rawExchange(path: string, headers: Record<string, string>, bodyStart: string): Promise<{ status: number; body: string }> {
  const url = new URL(suiteInfo().edgeA);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    const finish = () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? NaN);
      const body = rest.join('\r\n\r\n');
      if (status && Buffer.byteLength(body) >= length) {
        socket.destroy();
        resolve({ status, body: body.slice(0, length) });
        return true;
      }
      return false;
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      finish();
    });
    socket.on('error', reject);
    socket.on('close', () => finish() || reject(new Error(`no complete response: ${received.slice(0, 200)}`)));
    const head = Object.entries({ host: url.host, ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST ${url.pathname.replace(/\/$/, '')}${path} HTTP/1.1\r\n${head}\r\n\r\n${bodyStart}`);
  });
}
