import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { parse, stringify } from 'yaml';
import { FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY, FakeUpstreams, startFakeUpstreams } from './fake-upstreams';
import { startFakeOtlpCollector } from './fake-otlp-collector';
import { SUITE_INFO_FILE, SuiteInfo } from './suite-info';
import { mediaTestModels } from './media-test-models';
import { routingTestModels, withoutBreakers } from '../routing/routing-models';

// Tooling shared with `npm start`: plain JS outside any project, so the boundary rule does not apply.
/* eslint-disable @nx/enforce-module-boundaries */
const { ensureChromium, ensureInfra, natsServerBinary, waitForPort, defaults } = require('../../../../tools/scripts/lib/infra');
const { build } = require('../../../../tools/scripts/lib/build');
const { Suite, freePort, root } = require('../../../../tools/scripts/lib/suite');
/* eslint-enable @nx/enforce-module-boundaries */

// TEST_NAMESPACE (letters, digits, underscores) lets two checkouts run the suite side by side.
const NAMESPACE = process.env.TEST_NAMESPACE ? `_${process.env.TEST_NAMESPACE.replace(/\W/g, '')}` : '';
const DATABASE = `gateway_e2e${NAMESPACE}`;
const REDIS_URL = `redis://127.0.0.1:6379/${process.env.TEST_REDIS_DB ?? '14'}`;

async function freshDatabase(serverUrl: string): Promise<string> {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${DATABASE}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** A NATS server of the tests' own, so a suite started with `npm start` on this machine is not disturbed. */
async function privateNats(): Promise<{ url: string; stop: () => Promise<void> }> {
  const binary = natsServerBinary();
  if (!binary) return { url: process.env.NATS_URL ?? defaults.NATS_URL, stop: async () => undefined };
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'gateway-e2e-nats-'));
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
  if (!(await waitForPort('127.0.0.1', port, 10))) throw new Error('the test NATS server did not start');
  return {
    url: `nats://127.0.0.1:${port}`,
    // Wait for the server to exit before removing its store: it writes JetStream files while shutting down.
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(storeDir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

/**
 * The catalog the router serves in the tests: the shipped models plus models routed to the fake
 * upstreams (see fake-upstreams.ts for what each upstream model name does).
 */
function writeTestCatalog(dir: string, fakes: FakeUpstreams): string {
  const shipped = parse(readFileSync(join(root, 'config', 'models.yaml'), 'utf8')) as { models: Record<string, unknown>[] };
  // The decision model's backing calls take a moment here, so a burst can saturate the router (429).
  for (const model of shipped.models) {
    if (model.id === 'jev') (model.routes as Record<string, unknown>[])[0].options = { token_delay_ms: 150 };
  }
  const text = { endpoints: ['chat.completions', 'responses', 'messages'], tags: ['text', 'tools', 'streaming'] };
  const openaiRoute = (upstream: string) => ({
    adapter: 'openai',
    base_url: `${fakes.openai.url}/v1`,
    upstream_model: upstream,
    api_key_env: 'FAKE_OPENAI_KEY',
  });
  const anthropicRoute = (upstream: string) => ({
    adapter: 'anthropic',
    base_url: fakes.anthropic.url,
    upstream_model: upstream,
    api_key_env: 'FAKE_ANTHROPIC_KEY',
  });
  const model = (id: string, routes: object[], extra: Record<string, unknown> = {}) => ({
    id,
    name: id,
    owned_by: 'e2e',
    created: 1767225600,
    tokens: 32768,
    max_output_tokens: 1024,
    pricing: { input: 1, output: 2 },
    ...text,
    ...extra,
    routes,
  });
  const models = [
    ...shipped.models,
    model('fake-openai', [openaiRoute('echo')]),
    model('fake-anthropic', [anthropicRoute('echo')]),
    // The same upstream model, declared to take Anthropic's own structured outputs (output_config.format).
    model('fake-anthropic-structured', [{ ...anthropicRoute('echo'), structured_outputs: true }]),
    model('fake-openai-thinker', [openaiRoute('thinker')], { tags: ['text', 'reasoning'] }),
    model('fake-anthropic-thinker', [anthropicRoute('thinker')], { tags: ['text', 'reasoning'] }),
    model('fake-openai-slow', [openaiRoute('slow')]),
    model('fake-anthropic-slow', [anthropicRoute('slow')]),
    model('fallback-chat', [openaiRoute('always-500'), { adapter: 'simulator', upstream_model: 'sim-chat' }]),
    model('reject-400-chat', [openaiRoute('reject-400')]),
    model('broken-chat', [openaiRoute('always-500')]),
    model('bad-key-chat', [openaiRoute('bad-key')]),
    model('bad-key-fallback', [openaiRoute('bad-key'), { adapter: 'simulator', upstream_model: 'sim-chat' }]),
    model('cut-off-openai', [openaiRoute('cut-off')]),
    model('cut-off-anthropic', [anthropicRoute('cut-off')]),
    // Prompt caching and reported input (see fake-upstreams.ts); cache prices apart from input.
    model('fake-openai-cached', [openaiRoute('cached')], { pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 } }),
    model('fake-anthropic-cached', [anthropicRoute('cached')], { pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 } }),
    model('fake-anthropic-big-input', [anthropicRoute('big-input')]),
    model('fake-openai-big-input', [openaiRoute('big-input')]),
    model('sim-slow', [{ adapter: 'simulator', upstream_model: 'sim-slow', options: { token_delay_ms: 40 } }]),
    // 150 words at 40 ms: several seconds for a whole answer.
    model('sim-long', [{ adapter: 'simulator', upstream_model: 'sim-long', options: { token_delay_ms: 40, reply_words: 150 } }]),
    // Echoes a long prompt word by word, as fast as it goes: a stream of megabytes (slow-client.spec.ts).
    model('fake-openai-huge', [openaiRoute('echo')], { tokens: 200_000, max_output_tokens: 100_000 }),
    // Budget windows (budget-windows.spec.ts): the simulator priced so that a few short answers spend a credit.
    model('sim-pricey', [{ adapter: 'simulator', upstream_model: 'sim-chat' }], { pricing: { input: 1000, output: 10000 } }),
    ...mediaTestModels(openaiRoute),
    ...videoModels(fakes),
  ];
  const file = join(dir, 'models.e2e.yaml');
  const routed = [...withoutBreakers(models), ...routingTestModels(openaiRoute)];
  writeFileSync(file, `# Written by apps/gateway-e2e global setup.\n${stringify({ models: routed })}`);
  return file;
}

/**
 * Video models (see video/*.spec.ts): the shipped `sim-video` made quicker, a slow simulator to kill
 * a worker under, and the openai adapter against the fake video API (`sora-fake`, `sora-fail`, `sora-flaky`).
 */
function videoModels(fakes: FakeUpstreams): Record<string, unknown>[] {
  const video = (id: string, route: Record<string, unknown>) => ({
    id,
    name: id,
    owned_by: 'e2e',
    created: 1767225600,
    pricing: { input: 0, output: 0, per_item: 0.25 },
    endpoints: ['videos.generations'],
    sizes: ['16:9', '9:16'],
    routes: [route],
  });
  const simulator = (durationMs: number) => ({
    adapter: 'simulator',
    upstream_model: 'sim-video',
    options: { duration_ms: durationMs, clip_seconds: 1, fps: 4 },
  });
  const openai = (upstream: string) => ({
    adapter: 'openai',
    base_url: `${fakes.openai.url}/v1`,
    upstream_model: upstream,
    api_key_env: 'FAKE_OPENAI_KEY',
    options: { poll_interval_ms: 100, seconds: '8' },
  });
  return [
    video('sim-video-quick', simulator(2500)),
    video('sim-video-slow', simulator(9000)),
    video('fake-openai-video', openai('sora-fake')),
    video('fake-openai-video-fail', openai('sora-fail')),
    video('fake-openai-video-flaky', openai('sora-flaky')),
  ];
}

export default async function globalSetup(): Promise<void> {
  await ensureInfra(process.env);
  // The console's browser tests (console/*.browser.spec.ts) drive Chromium; without it they fail saying why, the other specs run.
  let chromium = '';
  try {
    chromium = ensureChromium(process.env);
  } catch (error) {
    process.stderr.write(`[e2e] ${(error as Error).message}\n`);
  }
  build({ quiet: true });
  const nats = await privateNats();
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL ?? defaults.DATABASE_URL);
  const { migrate } = require(join(root, 'dist/libs/db/src/migrate'));
  await migrate(databaseUrl);

  const fakes = await startFakeUpstreams();
  const collector = await startFakeOtlpCollector();
  const catalogDir = mkdtempSync(join(tmpdir(), 'gateway-e2e-catalog-'));
  const objectStoreDir = mkdtempSync(join(tmpdir(), 'gateway-e2e-objects-'));
  const modelsConfig = writeTestCatalog(catalogDir, fakes);
  const stopExtras = async () => {
    await fakes.close();
    await collector.close();
    rmSync(catalogDir, { recursive: true, force: true });
    rmSync(objectStoreDir, { recursive: true, force: true });
  };

  // Budgets and rate-limit windows of earlier runs must not leak into this one.
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  await redis.quit();

  const logDir = join(root, 'tmp', 'e2e-logs');
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    REDIS_URL,
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    FILE_URL_SECRET: randomBytes(32).toString('base64url'),
    // One key for every router process of the run, as replicas of a deployment share theirs.
    REASONING_SEAL_KEY: randomBytes(32).toString('base64'),
    // One store for the router, the video worker and the edges, as a shared volume would be.
    OBJECT_STORE_DIR: objectStoreDir,
    // Long enough that only key-change events can explain a refused key within a test.
    AUTH_CACHE_TTL_SECONDS: '300',
    // A small free-plan limit the rate-limit tests can exhaust; the other plans keep their defaults.
    PLAN_RATE_LIMITS: 'free=40:10000000',
    // Small DevPass token windows on the basic plan, which budget-windows.spec.ts spends (the other plans keep their defaults).
    DEVPASS_TOKEN_WINDOWS: 'basic=5h:2000|weekly:3000@Asia/Kolkata',
    KEY_USAGE_FLUSH_MS: '200',
    LOG_LEVEL: 'log',
    MODELS_CONFIG: modelsConfig,
    FAKE_OPENAI_KEY,
    FAKE_ANTHROPIC_KEY,
    // Every service exports its spans to the fake collector, promptly.
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    // Video streams: frequent heartbeats, and a killed worker's job taken over within seconds. The
    // lock is renewed every half of it: 2 s let a worker whose event loop stalled a second on a busy
    // machine lose a live job's lock (the job then counted as stalled and ran twice).
    VIDEO_HEARTBEAT_MS: '500',
    VIDEO_LOCK_MS: '5000',
  };
  const suite = new Suite({ env, logDir });
  const ports = {
    edgeA: await freePort(),
    edgeB: await freePort(),
  };
  const services: SuiteInfo['services'] = {};
  const edges: SuiteInfo['edges'] = {};
  try {
    for (const app of ['key-service', 'account-service', 'metering-service', 'inference-router', 'video-worker']) {
      // Quick retries, so fallback tests do not wait for the production backoff.
      const appEnv: Record<string, string> =
        app === 'inference-router' ? { UPSTREAM_RETRY_BASE_MS: '20' } : app === 'metering-service' ? { METERING_ACK_WAIT_MS: '2000' } : {};
      const started = await suite.start(app, { port: await freePort(), env: appEnv });
      services[app] = { pid: started.pid, healthPort: started.healthPort, env: appEnv };
    }
    const edgeA = await suite.start('edge-gateway', { id: 'edge-a', port: ports.edgeA });
    edges['edge-a'] = { pid: edgeA.pid, port: ports.edgeA, env: {} };
    // The second replica trusts X-Forwarded-For from loopback, as behind a local load balancer, and
    // gives slow clients short bounds, so the slow-body tests wait seconds, not the default 30 s,
    // and a streaming client that stops reading is cut off after 1 MiB (slow-client.spec.ts).
    const edgeBEnv = { TRUSTED_PROXIES: '127.0.0.1,::1', BODY_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '1500', STREAM_CLIENT_BACKLOG_BYTES: '1048576' };
    const edgeB = await suite.start('edge-gateway', { id: 'edge-b', port: ports.edgeB, env: edgeBEnv });
    edges['edge-b'] = { pid: edgeB.pid, port: ports.edgeB, env: edgeBEnv };
  } catch (error) {
    await suite.stopAll();
    await nats.stop();
    await stopExtras();
    throw error;
  }

  const info: SuiteInfo = {
    edgeA: `http://127.0.0.1:${ports.edgeA}`,
    edgeB: `http://127.0.0.1:${ports.edgeB}`,
    edgeAPort: ports.edgeA,
    env: env as Record<string, string>,
    logDir,
    fakeOpenAI: fakes.openai.url,
    fakeAnthropic: fakes.anthropic.url,
    otlpCollector: collector.url,
    modelsConfig,
    chromium,
    services,
    edges,
    root,
  };
  writeFileSync(SUITE_INFO_FILE, JSON.stringify(info));
  (globalThis as Record<string, unknown>).__gatewaySuite = { suite, nats, stopExtras };
}
