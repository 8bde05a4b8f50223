/**
 * PostgreSQL unreachable: the routes that need it answer 503 `service_unavailable` with
 * `Retry-After`, each in its own error format, never 500; and they serve again once it is back.
 * The machine's PostgreSQL serves other suites, so this test cuts a TCP proxy in front of it that
 * its own key-service and account-service use (on a NATS server of its own, so the suite's services
 * never answer its edge, nor its services the suite's).
 */
import { api, ApiResponse, createAccount, createProxyKey, sleep, TestAccount } from '../support/api';
import { AppProcess, CuttableProxy, RestartableServer, startApp, stopApps } from '../support/private-infra';
import { suiteInfo } from '../support/suite-info';

const unavailable = { message: expect.any(String), type: 'service_unavailable_error', code: 'service_unavailable', param: null };

function expect503(response: ApiResponse, body: unknown): void {
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 503, body });
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('PostgreSQL unreachable', () => {
  let nats: RestartableServer;
  let database: CuttableProxy;
  let apps: AppProcess[] = [];
  let edge: string;
  let account: TestAccount;

  beforeAll(async () => {
    nats = await RestartableServer.nats();
    const real = new URL(suiteInfo().env.DATABASE_URL);
    database = await CuttableProxy.to(real.hostname, Number(real.port || 5432));
    const proxied = new URL(real);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(database.port);
    const env = { NATS_URL: nats.url, DATABASE_URL: proxied.toString() };
    apps = await Promise.all([startApp('key-service', env, 'pg-down-key-service'), startApp('account-service', env, 'pg-down-account-service')]);
    const started = await startApp('edge-gateway', env, 'pg-down-edge', '/healthz');
    apps.push(started);
    edge = started.base;
    account = createAccount('pro', '10');
    // Ready once the edge authenticates through its key-service.
    for (let attempt = 0; attempt < 200 && (await api('GET', '/v1/user/me', { key: account.masterKey, base: edge })).status !== 200; attempt++)
      await sleep(100);
  }, 120_000);

  afterAll(async () => {
    await stopApps(apps);
    await database?.close().catch(() => undefined);
    await nats?.stop();
  });

  it('answers 503 with Retry-After in each route format while it is down, and serves again once it is back', async () => {
    const base = edge;
    // Cached by the edge: the master key. Never used: a proxy key, which key-service must look up.
    expect((await api('GET', '/v1/user/me', { key: account.masterKey, base })).status).toBe(200);
    const uncached = (await createProxyKey(account.masterKey)).key as string;
    // Through this edge's own key-service: proxy-key creation works before the cut.
    const created = await api('POST', '/v1/auth/proxy/create', { key: account.masterKey, base, body: { name: 'before', allocated_ammount: 1 } });
    expect(created.status).toBe(201);
    // Cached by the edge too: a proxy key, whose budgets validate reads from key-service all the same.
    const cachedProxy = (await api('POST', '/v1/auth/proxy/create', { key: account.masterKey, base, body: { name: 'cached', allocated_ammount: 1 } })).body.key;
    expect((await api('POST', '/v1/auth/proxy/validate', { key: cachedProxy, base, body: {} })).status).toBe(200);

    await database.close();

    // A key's own figures are never answered from the edge's cache: unavailable, not stale.
    expect503(await api('GET', '/v1/key', { key: account.masterKey, base }), { error: unavailable });
    expect503(await api('POST', '/v1/auth/proxy/validate', { key: cachedProxy, base, body: {} }), { detail: expect.any(String) });

    expect503(await api('GET', '/v1/user/me', { key: account.masterKey, base }), { error: unavailable });
    expect503(await api('GET', '/v1/user/logs', { key: account.masterKey, base }), { error: unavailable });
    expect503(await api('POST', '/v1/auth/proxy/create', { key: account.masterKey, base, body: { name: 'during', allocated_ammount: 1 } }), {
      detail: expect.any(String),
    });
    expect503(await api('GET', '/v1/models', { key: uncached, base }), { error: unavailable });
    expect503(await api('GET', '/v1/models', { key: created.body.key, base }), { error: unavailable });
    const anthropicFormat = await api('POST', '/v1/messages', {
      key: created.body.key,
      base,
      headers: { 'anthropic-version': '2023-06-01' },
      body: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect503(anthropicFormat, { type: 'error', error: { type: 'api_error', message: expect.any(String) } });

    await database.open();
    let me: ApiResponse = await api('GET', '/v1/user/me', { key: account.masterKey, base });
    for (let attempt = 0; attempt < 300 && me.status !== 200; attempt++) {
      await sleep(100);
      me = await api('GET', '/v1/user/me', { key: account.masterKey, base });
    }
    expect(me.status).toBe(200);
    // Looked up anew (it was never cached): key-service reads the database again.
    const validated = await api('POST', '/v1/auth/proxy/validate', { key: uncached, base, body: {} });
    expect(validated.body).toMatchObject({ valid: true });
  }, 120_000);
});
