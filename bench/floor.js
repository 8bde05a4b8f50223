'use strict';
/**
 * `npm run bench:floor`: what the gateway's shape costs at least, beside what ours and Portkey cost,
 * in one run on one machine (see docs/benchmark.md, "The floor of the architecture").
 *
 * Non-streaming chat completions against the bench's mock upstream, closed loop, at 64 and 1
 * connection(s) (`FLOOR_CONNECTIONS`), two rounds with the targets in turn (`FLOOR_ROUNDS`), 2 s of
 * warm-up and 8 s measured each (`FLOOR_WARMUP`, `FLOOR_DURATION`):
 * - the mock directly (its p50 is what every "added" figure is added to);
 * - the bare gateways of lib/floor-parts.js: one process (HTTP in, the upstream call, the answer);
 *   an edge and a router over NATS request/reply (a private nats-server, its CPU counted); the same
 *   with one Redis script per request on the edge before the NATS request;
 * - our gateway as `npm run bench` starts it (authentication, rate limits, budget reservation,
 *   metering on; its CPU counted until the ledger held every request);
 * - Portkey.
 * For each: req/s, p50, the p50 added to the mock's, CPU per request (all the target's processes; each
 * process's share in the JSON written to bench/results/floor-<time>.json),
 * and the CPU per request and added p50 as ratios to Portkey's in the same round.
 */
require('../tools/scripts/lib/runtime').assertSupportedRuntime('npm run bench:floor');
const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { createCleanup } = require('./lib/cleanup');
const cpu = require('./lib/cpu');
const { openLedger } = require('./lib/ledger');
const { closedLoop } = require('./lib/load');
const { startMockUpstream } = require('./lib/mock-upstream');
const { privateNats, startOurGateway, REDIS_DB } = require('./lib/our-suite');
const { startPortkey, portkeyHeaders } = require('./lib/portkey');
const { chatBody } = require('./lib/prompts');
const { boundedInt, boundedList, resultStamp } = require('./lib/settings');
const { defaults } = require('../tools/scripts/lib/infra');
const { root } = require('../tools/scripts/lib/suite');

const LOG_DIR = path.join(root, 'tmp', 'bench-logs');
const RESULTS_DIR = path.join(__dirname, 'results');

const log = (line) => console.log(`[floor] ${line}`);

/** Starts one bare gateway process of lib/floor-parts.js; resolves with its pid and HTTP port. */
function startPart(role, env, cleanup) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'lib', 'floor-parts.js'), [role], { env: { ...process.env, ...env }, stdio: 'inherit' });
    cleanup.add(`floor ${role}`, () => child.kill());
    child.once('message', (port) => resolve({ pid: child.pid, port }));
    child.once('exit', (code) => reject(new Error(`floor ${role} exited (${code}) before it was ready`)));
  });
}

async function main() {
  const settings = {
    connections: boundedList('FLOOR_CONNECTIONS', '64,1', 1, 1024),
    rounds: boundedInt('FLOOR_ROUNDS', 2, 1, 20),
    warmup: boundedInt('FLOOR_WARMUP', 2, 0, 60),
    duration: boundedInt('FLOOR_DURATION', 8, 1, 120),
  };
  const cleanup = createCleanup(log);
  process.once('SIGINT', () => void cleanup.run().then(() => process.exit(130)));
  try {
    const upstreamKey = randomBytes(12).toString('hex');
    const mock = await startMockUpstream();
    cleanup.add('mock', () => mock.stop());
    const ours = await startOurGateway({ mockUrl: mock.url, upstreamKey, logDir: LOG_DIR, cleanup, log, onUnexpectedExit: (id) => log(`${id} exited`) });
    const ledger = await openLedger({ databaseUrl: ours.databaseUrl, natsUrl: ours.natsUrl });
    cleanup.add('ledger', () => ledger.close());
    const portkey = await startPortkey({ logDir: LOG_DIR, cleanup });
    // Its own server, without JetStream, so its CPU is the bare gateways' alone.
    const nats = await privateNats(cleanup, log, { jetstream: false });
    if (!nats.pid) throw new Error('nats-server is not installed: the bare gateways need one of their own');
    const redisUrl = new URL(process.env.REDIS_URL ?? defaults.REDIS_URL);
    redisUrl.pathname = `/${REDIS_DB}`;
    const env = { FLOOR_MOCK: mock.url, FLOOR_NATS: nats.url };
    const proxy = await startPart('proxy', env, cleanup);
    const router = await startPart('router', env, cleanup);
    const edge = await startPart('edge', env, cleanup);
    const admittingEdge = await startPart('edge', { ...env, FLOOR_REDIS: redisUrl.toString() }, cleanup);
    log(`ready: ours ${ours.url}, Portkey ${portkey.version} ${portkey.url}, node ${process.version}`);

    const redisPids = () => cpu.pidsNamed('redis-server');
    let postgresPids = [];
    const local = (port) => `http://127.0.0.1:${port}/v1/chat/completions`;
    const targets = [
      { name: 'mock direct', url: `${mock.url}/v1/chat/completions`, model: 'mock', pids: () => ({}) },
      { name: 'floor: one process', url: local(proxy.port), model: 'bench-model', pids: () => ({ proxy: [proxy.pid] }) },
      {
        name: 'floor: edge → NATS → router',
        url: local(edge.port),
        model: 'bench-model',
        pids: () => ({ edge: [edge.pid], 'nats-server': [nats.pid], router: [router.pid] }),
      },
      {
        name: 'floor: + a Redis script',
        url: local(admittingEdge.port),
        model: 'bench-model',
        pids: () => ({ edge: [admittingEdge.pid], 'nats-server': [nats.pid], router: [router.pid], 'redis-server': redisPids() }),
      },
      {
        name: 'our gateway (metered)',
        url: `${ours.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${ours.key}` },
        model: 'bench-model',
        pids: () => ({
          ...Object.fromEntries(Object.entries(ours.pids).map(([id, pid]) => [id, [pid]])),
          'redis-server': redisPids(),
          postgres: postgresPids,
        }),
        metered: true,
      },
      {
        name: 'portkey',
        url: `${portkey.url}/v1/chat/completions`,
        headers: portkeyHeaders(mock.url, upstreamKey),
        model: 'mock',
        pids: () => ({ portkey: [portkey.pid] }),
      },
    ];

    const rows = [];
    for (let round = 1; round <= settings.rounds; round++) {
      for (const connections of settings.connections) {
        const results = {};
        for (const target of targets) {
          const body = chatBody(target.model, false);
          const load = { url: target.url, headers: target.headers ?? {}, body, connections };
          const rowsAtStart = target.metered ? await ledger.rowCount() : 0;
          const warm = settings.warmup > 0 ? await closedLoop({ ...load, durationSeconds: settings.warmup }) : null;
          if (target.metered) {
            await ledger.waitCaughtUp({ atLeast: rowsAtStart + (warm?.['2xx'] ?? 0), maxMs: 60_000, snapshot: () => null });
            postgresPids = await ledger.postgresPids(cpu.pidsNamed('postgres'));
          }
          const groups = target.pids();
          const rowsBefore = target.metered ? await ledger.rowCount() : 0;
          const before = cpu.snapshot(groups);
          const result = await closedLoop({ ...load, durationSeconds: settings.duration });
          let after = cpu.snapshot(groups);
          const ok = result['2xx'];
          if (target.metered) {
            const caught = await ledger.waitCaughtUp({ atLeast: rowsBefore + ok, maxMs: 60_000, snapshot: () => cpu.snapshot(groups), ids: result.requestIds });
            if (!caught.caughtUp) log(`round ${round}, ${connections} connection(s): metering did not catch up within 60 s`);
            after = caught.snapshot;
          }
          const perProcess = cpu.diff(before, after).groups;
          const cpuSeconds = Object.keys(groups).length ? Object.values(perProcess).reduce((sum, value) => sum + (value ?? 0), 0) : null;
          results[target.name] = {
            round,
            connections,
            target: target.name,
            ok,
            failed: result.non2xx + result.errors + result.timeouts,
            reqPerSecond: ok / settings.duration,
            p50Ms: result.exact.p50,
            cpuMsPerRequest: cpuSeconds === null || ok === 0 ? null : (1000 * cpuSeconds) / ok,
            cpuMsPerRequestByProcess:
              ok === 0 ? {} : Object.fromEntries(Object.entries(perProcess).map(([name, value]) => [name, value === null ? null : (1000 * value) / ok])),
          };
        }
        const mockP50 = results['mock direct'].p50Ms;
        for (const row of Object.values(results)) row.addedP50Ms = row.target === 'mock direct' ? null : row.p50Ms - mockP50;
        const pk = results.portkey;
        for (const row of Object.values(results)) {
          row.cpuVsPortkey = row.cpuMsPerRequest && pk.cpuMsPerRequest ? row.cpuMsPerRequest / pk.cpuMsPerRequest : null;
          row.addedVsPortkey = row.addedP50Ms !== null && pk.addedP50Ms > 0 ? row.addedP50Ms / pk.addedP50Ms : null;
          rows.push(row);
        }
        print(Object.values(results), round, connections);
      }
    }
    const file = path.join(RESULTS_DIR, `floor-${resultStamp(new Date())}.json`);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify({ node: process.version, portkey: portkey.version, settings, rows }, null, 2)}\n`);
    log(`figures written to ${path.relative(root, file)}`);
  } finally {
    await cleanup.run();
  }
}

function print(rows, round, connections) {
  const fixed = (value, digits) => (value === null || value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits));
  console.log(`\nround ${round}, ${connections} connection(s), node ${process.version}`);
  console.log(
    `${'target'.padEnd(30)} ${'req/s'.padStart(7)} ${'failed'.padStart(6)} ${'p50 ms'.padStart(7)} ${'+p50 ms'.padStart(8)} ${'CPU ms/req'.padStart(10)} ${'CPU/req vs Portkey'.padStart(18)} ${'+p50 vs Portkey'.padStart(15)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.target.padEnd(30)} ${fixed(row.reqPerSecond, 0).padStart(7)} ${String(row.failed).padStart(6)} ${fixed(row.p50Ms, 2).padStart(7)} ${fixed(row.addedP50Ms, 2).padStart(8)} ` +
        `${fixed(row.cpuMsPerRequest, 3).padStart(10)} ${(row.cpuVsPortkey === null ? '-' : `${fixed(row.cpuVsPortkey, 2)}×`).padStart(18)} ${(row.addedVsPortkey === null ? '-' : `${fixed(row.addedVsPortkey, 2)}×`).padStart(15)}`,
    );
  }
  for (const row of rows) {
    const shares = Object.entries(row.cpuMsPerRequestByProcess).filter(([, value]) => value !== null);
    if (shares.length > 1) console.log(`  ${row.target}, CPU ms/req by process: ${shares.map(([name, value]) => `${name} ${fixed(value, 3)}`).join(', ')}`);
  }
}

main().catch((error) => {
  console.error(`bench:floor failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
