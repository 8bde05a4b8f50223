/**
 * Behind PgBouncer in transaction mode, as platform teams bound the connections of many replicas: a
 * private PgBouncer (Debian's package) with two server connections in front of the suite's database;
 * this test's own key-, account- and metering-service, router and edge, on a NATS server of their own,
 * with DATABASE_URL at PgBouncer and DATABASE_DIRECT_URL at the database. The core paths answer as
 * they do on a direct connection while more clients than server connections take turns on them: a
 * statement prepared by name for one client would meet another client's on the same server
 * connection ("prepared statement already exists / does not exist"), and a session setting or lock
 * would leak to it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { api, ApiResponse, createAccount, sleep, TestAccount } from '../support/api';
import { AppProcess, RestartableServer, startApp, stopApps } from '../support/private-infra';
import { suiteInfo } from '../support/suite-info';

// Tooling shared with `npm start`: plain JS outside any project, so the boundary rule does not apply.
/* eslint-disable @nx/enforce-module-boundaries */
const { startPgBouncer } = require('../../../../tools/scripts/lib/pgbouncer');
/* eslint-enable @nx/enforce-module-boundaries */

/** Server connections PgBouncer keeps per database and user: fewer than the services' clients. */
const POOL_SIZE = 2;
const SERVICES = ['key-service', 'account-service', 'metering-service', 'inference-router'];
const PRICE = { input: 0.5, output: 1.5 }; // sim-chat, credits per million tokens (config/models.yaml)
const BODY = { model: 'sim-chat', max_tokens: 40, messages: [{ role: 'user', content: 'through the pooler' }] };
const costOf = (usage: { prompt_tokens: number; completion_tokens: number }) =>
  (usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output) / 1_000_000;

interface Bouncer {
  url: string;
  version: string;
  stop(): Promise<void>;
}

/** Reads `read()` until `done` holds or `timeoutMs` passes; returns the last value. */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(100);
    value = await read();
  }
  return value;
}

async function query<T>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('behind PgBouncer in transaction mode', () => {
  let bouncer: Bouncer;
  let nats: RestartableServer;
  const apps: AppProcess[] = [];
  let edge: string;
  let env: Record<string, string>;
  const direct = () => suiteInfo().env.DATABASE_URL;
  const database = () => new URL(direct()).pathname.slice(1);

  /** PgBouncer's admin console: its client and server connections to the suite's database. */
  async function connections(): Promise<{ clients: number; servers: number }> {
    const admin = new URL(bouncer.url);
    admin.pathname = '/pgbouncer';
    // Simple-protocol statements only: the admin console takes no others.
    const clients = await query<{ database: string }>(admin.toString(), 'SHOW CLIENTS');
    const servers = await query<{ database: string }>(admin.toString(), 'SHOW SERVERS');
    const ours = (rows: { database: string }[]) => rows.filter((row) => row.database === database()).length;
    return { clients: ours(clients), servers: ours(servers) };
  }

  const chat = (key: string, stream = false): Promise<ApiResponse> =>
    api('POST', '/v1/chat/completions', { key, base: edge, body: stream ? { ...BODY, stream: true, stream_options: { include_usage: true } } : BODY });

  /** The usage a chat answered with, streamed (its last chunk with usage) or not. */
  function usageOf(response: ApiResponse): { prompt_tokens: number; completion_tokens: number } {
    if (typeof response.body === 'object') return response.body.usage;
    const chunks = response.text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)));
    return chunks.find((chunk) => chunk.usage).usage;
  }

  beforeAll(async () => {
    bouncer = await startPgBouncer(direct(), { poolSize: POOL_SIZE });
    nats = await RestartableServer.nats();
    env = { NATS_URL: nats.url, DATABASE_URL: bouncer.url, DATABASE_DIRECT_URL: direct() };
    // Those that started are stopped by afterAll even when another did not become ready.
    const started = await Promise.allSettled(SERVICES.map((app) => startApp(app, env, `pgbouncer-${app}`)));
    for (const result of started) if (result.status === 'fulfilled') apps.push(result.value);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    const front = await startApp('edge-gateway', env, 'pgbouncer-edge');
    apps.push(front);
    edge = front.base;
  }, 180_000);

  afterAll(async () => {
    await stopApps(apps);
    await nats?.stop();
    await bouncer?.stop();
  });

  it('runs the migration Job past PgBouncer, on DATABASE_DIRECT_URL alone', () => {
    const { root } = suiteInfo();
    // DATABASE_URL names PgBouncer with a password it refuses: the run can only succeed on the direct URL.
    const refused = new URL(bouncer.url);
    refused.password = 'not-the-password';
    // The suite's database is migrated already: the runner finds every migration recorded.
    const output = execFileSync(process.execPath, [join(root, 'dist/libs/db/src/migrate.main.js')], {
      cwd: root,
      env: { ...process.env, ...env, DATABASE_URL: refused.toString() },
      encoding: 'utf8',
    });
    expect(output).toMatch(/^migrations: 0 applied, [1-9]\d* already applied$/m);
  });

  it('issues keys, answers chats plain and streamed, and writes exactly one ledger row per answered request', async () => {
    const owner: TestAccount = createAccount('pro', '10', env);
    const created = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, base: edge, body: { name: 'pooled', allocated_ammount: 5 } });
    expect(created.status).toBe(201);
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, base: edge, body: { proxy_key: created.body.key } });
    expect(lookup).toMatchObject({ status: 200, body: { allocated_ammount: 5, used_ammount: 0 } });
    const listed = await api('GET', '/v1/auth/proxy', { key: owner.masterKey, base: edge });
    expect(listed.status).toBe(200);

    // Both keys, plain and streamed, at once: the services' clients outnumber the server connections.
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => chat(i % 2 ? owner.masterKey : created.body.key, i % 3 === 0)));
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    for (const [i, response] of responses.entries()) {
      if (i % 3 === 0) {
        expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(response.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      } else {
        expect(response.body.choices[0].message.content).toEqual(expect.any(String));
      }
    }
    const requestIds = responses.map((response) => response.headers.get('x-request-id'));
    expect(new Set(requestIds).size).toBe(responses.length);

    // Read on the database itself: one row per answered request, none for anything else.
    const ledger = () => query<{ request_id: string }>(direct(), 'SELECT request_id FROM usage_logs WHERE account_id = $1', [owner.accountId]);
    const rows = await poll(ledger, (found) => found.length >= responses.length);
    expect(rows.map((row) => row.request_id).sort()).toEqual([...requestIds].sort());

    // The account's usage, read through PgBouncer by account-service: requests counted, credits exact.
    const spent = responses.reduce((sum, response) => sum + costOf(usageOf(response)), 0);
    const me = await poll(
      () => api('GET', '/v1/user/me', { key: owner.masterKey, base: edge }),
      (response) => response.body?.endpoints?.['chat.completions'] === responses.length,
    );
    expect(me.status).toBe(200);
    expect(me.body.endpoints['chat.completions']).toBe(responses.length);
    expect(Math.abs(me.body.credits - (10 - spent))).toBeLessThan(1e-9);
    const logs = await api('GET', '/v1/user/logs?limit=100', { key: owner.masterKey, base: edge });
    expect(logs.status).toBe(200);
    expect(logs.body.map((entry: { request_id: string }) => entry.request_id).sort()).toEqual([...requestIds].sort());
  });

  it('holds a proxy key to its allocation under concurrent requests: the rest get 402, the spend is what was served', async () => {
    const owner = createAccount('enterprise', '100', env);
    const probe = await chat(owner.masterKey);
    expect(probe.status).toBe(200);
    const unitCost = costOf(probe.body.usage);
    const allocation = Number((unitCost * 10).toFixed(8));
    const created = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, base: edge, body: { name: 'capped', allocated_ammount: allocation } });
    expect(created.status).toBe(201);

    const results = await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => chat(created.body.key, i % 2 === 0)),
      // account-service too, so every service holds clients of PgBouncer at once.
      ...Array.from({ length: 5 }, () => api('GET', '/v1/user/me', { key: owner.masterKey, base: edge })),
    ]);
    // The services' pools keep their connections for seconds after use: count them now.
    const { clients, servers } = await connections();
    expect({ clients: clients > POOL_SIZE, servers: servers <= POOL_SIZE }).toEqual({ clients: true, servers: true });

    const chats = results.slice(0, 60);
    expect(results.slice(60).map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    const served = chats.filter((response) => response.status === 200);
    expect(served.length).toBeGreaterThan(0);
    expect(served.length).toBeLessThanOrEqual(10);
    for (const refused of chats.filter((response) => response.status !== 200)) {
      expect(refused.status).toBe(402);
      expect(refused.body.error).toMatchObject({ type: 'insufficient_quota', code: 'allocation_exhausted' });
    }
    const lookup = () => api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, base: edge, body: { proxy_key: created.body.key } });
    const record = await poll(lookup, (response) => Math.abs(response.body.used_ammount - served.length * unitCost) < 1e-9);
    expect(Math.abs(record.body.used_ammount - served.length * unitCost)).toBeLessThan(1e-9);
    expect(record.body.used_ammount).toBeLessThanOrEqual(allocation + 1e-12);
  });

  it("enforces the plan's requests per minute: exactly N answered, the rest 429 with Retry-After", async () => {
    const limit = 40; // the free plan in this suite (PLAN_RATE_LIMITS)
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 15) await sleep(secondsLeft * 1000 + 200); // all in one minute window
    const account = createAccount('free', '5', env);
    const results = await Promise.all(Array.from({ length: limit + 10 }, () => api('GET', '/v1/models', { key: account.masterKey, base: edge })));
    expect(results.filter((response) => response.status === 200)).toHaveLength(limit);
    const limited = results.filter((response) => response.status === 429);
    expect(limited).toHaveLength(10);
    for (const response of limited) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    }
  });

  it('left every service ready, and no service logged a prepared-statement error', async () => {
    for (const app of apps) {
      const ready = await fetch(`${app.base}/readyz`);
      expect([app.app, ready.status]).toEqual([app.app, 200]);
    }
    const { logDir } = suiteInfo();
    for (const app of [...SERVICES, 'edge']) {
      const log = readFileSync(join(logDir, `pgbouncer-${app}.log`), 'utf8');
      expect([app, log.match(/.*prepared statement.*/gi)]).toEqual([app, null]);
    }
  });
});
