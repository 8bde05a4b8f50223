'use strict';
/**
 * Our suite for the bench, started as the end-to-end tests start it
 * (apps/gateway-e2e/src/support/global-setup.ts): infrastructure ensured, build, a private NATS
 * server on a free port (when nats-server is installed), a fresh database `gateway_bench`,
 * migrations, every service from dist/ with its output in tmp/bench-logs/. The router serves a
 * catalog of one model, `bench-model`, routed to the mock upstream.
 *
 * Every step registers how to undo it with `cleanup.add()` as soon as it succeeded, so a failure or
 * Ctrl-C half-way stops exactly what was started.
 */
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { stringify } = require('yaml');

const { ensureInfra, natsServerBinary, waitForPort, defaults } = require('../../tools/scripts/lib/infra');
const { build } = require('../../tools/scripts/lib/build');
const { Suite, freePort, root } = require('../../tools/scripts/lib/suite');
const { probe } = require('./load');

// npm start uses Redis database 0, the end-to-end tests 14. BENCH_DATABASE / BENCH_REDIS_DB move a
// bench elsewhere, so two checkouts can run one at the same time without dropping each other's data.
const DATABASE = process.env.BENCH_DATABASE || 'gateway_bench';
const REDIS_DB = process.env.BENCH_REDIS_DB ? Number(process.env.BENCH_REDIS_DB) : 13;
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(DATABASE)) throw new Error('BENCH_DATABASE must be a lower-case PostgreSQL identifier');
if (!Number.isInteger(REDIS_DB) || REDIS_DB < 0 || REDIS_DB > 15) throw new Error('BENCH_REDIS_DB must be an integer from 0 to 15');
const SERVICES = ['key-service', 'account-service', 'metering-service', 'inference-router', 'video-worker'];

async function freshDatabase(serverUrl) {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/**
 * A NATS server of the bench's own, so a suite started with `npm start` is not disturbed; with
 * JetStream (a store in a temporary directory) unless `jetstream` is false. When nats-server is not
 * installed: the shared NATS, and `pid` null.
 */
async function privateNats(cleanup, log, { jetstream = true } = {}) {
  const binary = natsServerBinary();
  if (!binary) {
    const url = process.env.NATS_URL ?? defaults.NATS_URL;
    log(`nats-server is not installed: using the shared NATS at ${url}`);
    return { url, pid: null };
  }
  const port = await freePort();
  const storeDir = jetstream ? fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-nats-')) : null;
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), ...(storeDir ? ['-js', '-sd', storeDir] : [])], { stdio: 'ignore' });
  cleanup.add('private NATS server', async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true, maxRetries: 3 });
  });
  if (!(await waitForPort('127.0.0.1', port, 10))) throw new Error('the bench NATS server did not start');
  return { url: `nats://127.0.0.1:${port}`, pid: child.pid };
}

/** A catalog model of the streams scenarios: `upstream` is the mock's paced model it is routed to. */
function pacedModel(mockUrl, id, upstream, what, how) {
  return {
    id,
    name: `Bench model, ${what}`,
    description: `The bench mock upstream ${how}, through the openai adapter.`,
    owned_by: 'bench',
    created: 1767225600,
    tokens: 32768,
    max_output_tokens: 4096,
    pricing: { input: 0.01, output: 0.01 },
    endpoints: ['chat.completions'],
    premium_model: false,
    tags: ['text', 'streaming'],
    routes: [{ adapter: 'openai', base_url: `${mockUrl}/v1`, upstream_model: upstream, api_key_env: 'BENCH_UPSTREAM_KEY' }],
  };
}

function writeCatalog(mockUrl, cleanup) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-catalog-'));
  cleanup.add('catalog file', () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'models.yaml');
  const catalog = {
    models: [
      {
        id: 'bench-model',
        name: 'Bench model',
        description: 'The bench mock upstream, through the openai adapter.',
        owned_by: 'bench',
        created: 1767225600,
        tokens: 32768,
        max_output_tokens: 256,
        pricing: { input: 0.01, output: 0.01 },
        endpoints: ['chat.completions', 'responses', 'messages'],
        premium_model: false,
        tags: ['text', 'streaming'],
        routes: [{ adapter: 'openai', base_url: `${mockUrl}/v1`, upstream_model: 'mock', api_key_env: 'BENCH_UPSTREAM_KEY' }],
      },
      // The streams scenarios: the mock answers these at a steady pace (lib/mock-upstream.js).
      pacedModel(mockUrl, 'bench-model-paced', 'mock-paced', 'paced streams', 'generating at a steady pace'),
      pacedModel(mockUrl, 'bench-model-busbar', 'mock-busbar', 'busbar streams', 'streaming 64 deltas 20 ms apart (the GetBusbar method)'),
    ],
  };
  fs.writeFileSync(file, `# Written by bench/run.js for one run.\n${stringify(catalog)}`);
  return file;
}

/** The services must not reach anything through a proxy: every bench request stays on 127.0.0.1. */
function withoutProxies(env) {
  const copy = { ...env };
  for (const name of Object.keys(copy)) {
    if (/^(http|https|all|ftp)_proxy$/i.test(name)) delete copy[name];
  }
  copy.NO_PROXY = '127.0.0.1,localhost,::1';
  copy.no_proxy = copy.NO_PROXY;
  return copy;
}

/**
 * @param {object} options
 * @param {string} options.mockUrl base URL of the mock upstream (no /v1)
 * @param {string} options.upstreamKey value of BENCH_UPSTREAM_KEY
 * @param {string} options.logDir
 * @param {{add: Function}} options.cleanup
 * @param {(message: string) => void} options.log
 * @param {(id: string, code: number|null, signal: string|null) => void} options.onUnexpectedExit
 */
async function startOurGateway({ mockUrl, upstreamKey, logDir, cleanup, log, onUnexpectedExit }) {
  log('checking PostgreSQL, Redis and NATS...');
  const stopInfra = await ensureInfra(process.env);
  if (typeof stopInfra === 'function') cleanup.add('infrastructure started for the bench', stopInfra);

  log('building (swc → dist/)...');
  build({ quiet: true });

  const nats = await privateNats(cleanup, log);
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL ?? defaults.DATABASE_URL);
  const { migrate } = require(path.join(root, 'dist/libs/db/src/migrate'));
  await migrate(databaseUrl);
  log(`database ${DATABASE} created and migrated; NATS at ${nats.url}`);

  const redisBase = new URL(process.env.REDIS_URL ?? defaults.REDIS_URL);
  redisBase.pathname = `/${REDIS_DB}`;
  const env = withoutProxies({
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    REDIS_URL: redisBase.toString(),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    FILE_URL_SECRET: randomBytes(32).toString('base64url'),
    REASONING_SEAL_KEY: randomBytes(32).toString('base64'),
    MODELS_CONFIG: writeCatalog(mockUrl, cleanup),
    BENCH_UPSTREAM_KEY: upstreamKey,
    LOG_LEVEL: 'warn',
    // Rate limiting stays on (its Redis script runs for every request) with a ceiling the load
    // cannot reach, so the figures measure its cost rather than its refusals.
    PLAN_RATE_LIMITS: 'enterprise=1000000000:1000000000000',
  });
  // Opt-in: a V8 CPU profile per service, written to this directory when the bench stops them.
  if (process.env.BENCH_CPU_PROF) {
    env.BENCH_CPU_PROF = path.resolve(process.env.BENCH_CPU_PROF);
    fs.mkdirSync(env.BENCH_CPU_PROF, { recursive: true });
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require=${path.join(__dirname, 'cpu-profile-preload.js')}`.trim();
  }

  fs.rmSync(logDir, { recursive: true, force: true });
  const suite = new Suite({ env, logDir });
  suite.onUnexpectedExit = onUnexpectedExit;
  cleanup.add('gateway services', () => suite.stopAll());
  for (const app of SERVICES) await suite.start(app, { port: await freePort() });
  const edgePort = await freePort();
  await suite.start('edge-gateway', { id: 'edge-gateway', port: edgePort });
  log(`services ready (logs in ${path.relative(root, logDir)}/)`);

  const created = spawnSync(
    process.execPath,
    [path.join(root, 'dist/apps/key-service/src/cli/admin.cli.js'), 'account', 'create', '--plan', 'enterprise', '--credits', '1000000', '--json'],
    { env, cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  if (created.status !== 0) throw new Error(`admin CLI account create failed: ${(created.stderr || created.stdout || created.error?.message || '').trim()}`);
  const account = JSON.parse(created.stdout.trim().split('\n').pop());
  if (!account.master_key) throw new Error(`admin CLI printed no master key: ${created.stdout}`);

  const pids = {};
  for (const [id, record] of suite.processes) pids[id] = record.child.pid;
  if (nats.pid) pids['nats-server (private)'] = nats.pid;
  return {
    url: `http://127.0.0.1:${edgePort}`,
    key: account.master_key,
    accountId: account.account_id,
    pids,
    natsUrl: nats.url,
    databaseUrl,
    privateNats: Boolean(nats.pid),
    suite,
  };
}

/**
 * A proxy key's budget windows beyond its allocation, in the order a key takes them: the first three
 * are the example (#21); all distinct periods, none the allocation's (lifetime, in UTC).
 */
const BUDGET_WINDOWS = [
  { period: '5h' },
  { period: 'weekly', timezone: 'Europe/Berlin' },
  { period: 'monthly' },
  { period: 'daily', timezone: 'America/New_York' },
  { period: '7d' },
  { period: 'quarterly', timezone: 'Asia/Kolkata' },
  { period: '30m' },
  { period: '90d' },
];

/**
 * Creates a proxy key with `windows` budget windows over the API, as a customer would, with the
 * account's master key: `POST /v1/auth/proxy/create`. The allocation (lifetime) and every window get
 * `amount` credits, far above what a run spends, so no request is refused for its budget.
 * @returns {{ key: string, budgets: object[] }} the key's value and its budgets as the API answered them
 */
async function createBudgetKey({ url, masterKey, windows, amount }) {
  if (windows > BUDGET_WINDOWS.length) throw new Error(`at most ${BUDGET_WINDOWS.length} budget windows`);
  const body = {
    name: `bench, ${windows} budget window(s)`,
    allocated_ammount: amount,
    budgets: BUDGET_WINDOWS.slice(0, windows).map((window) => ({ amount, ...window })),
  };
  const response = await probe({ url: `${url}/v1/auth/proxy/create`, headers: { authorization: `Bearer ${masterKey}` }, body: JSON.stringify(body) });
  let record = null;
  try {
    record = JSON.parse(response.body);
  } catch {
    record = null;
  }
  if (response.status !== 201 || typeof record?.key !== 'string') {
    throw new Error(`POST /v1/auth/proxy/create answered ${response.status}: ${response.body.slice(0, 300)}`);
  }
  return { key: record.key, budgets: record.budgets ?? [] };
}

/** The calling key's budgets and where they stand (`GET /v1/key`): [{period, timezone, amount, used, remaining, resets_at}]. */
async function keyBudgets({ url, key }) {
  const response = await probe({ url: `${url}/v1/key`, method: 'GET', headers: { authorization: `Bearer ${key}` } });
  if (response.status !== 200) throw new Error(`GET /v1/key answered ${response.status}: ${response.body.slice(0, 300)}`);
  return JSON.parse(response.body).budgets;
}

module.exports = { startOurGateway, createBudgetKey, keyBudgets, privateNats, withoutProxies, BUDGET_WINDOWS, DATABASE, REDIS_DB };
