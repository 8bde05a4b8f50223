'use strict';
/**
 * npm run bench: the gateway's own overhead, next to calling the upstream directly and next to the
 * Portkey gateway, with the same load against the same local mock upstream. See bench/README.md.
 *
 * 1. a mock OpenAI Chat Completions upstream (worker thread, node:http, keep-alive);
 * 2. our suite from dist/ (as the end-to-end tests start it) with a catalog of one model routed to
 *    the mock, and an enterprise account made with the admin CLI;
 * 3. Portkey from node_modules, pointed at the same mock through its headers;
 * 4. for each concurrency, each target: warm-up, then a measured closed-loop autocannon run; then
 *    sequential streaming requests per target for time to first byte;
 * 5. tables on the console, every figure in bench/results/<timestamp>.json;
 * 6. everything started is stopped again, also on failure and Ctrl-C.
 *
 * Knobs (environment, each bounded): BENCH_CONNECTIONS (1,16,64), BENCH_DURATION (8 s),
 * BENCH_WARMUP (2 s), BENCH_TTFB_REQUESTS (200), BENCH_PORTKEY_SHIM (1; 0 runs Portkey without the
 * header workaround in lib/portkey-fetch-shim.js), BENCH_CPU_PROF (unset; a directory: each of our services
 * writes a V8 .cpuprofile there when stopped).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { root } = require('../tools/scripts/lib/suite');
const cpu = require('./lib/cpu');
const { closedLoop, ttfb, probe, stopCurrent } = require('./lib/load');
const { startMockUpstream, CONTENT } = require('./lib/mock-upstream');
const { startOurGateway } = require('./lib/our-suite');
const { startPortkey, portkeyHeaders } = require('./lib/portkey');
const { loadTable, ttfbTable } = require('./lib/report');

const LOG_DIR = path.join(root, 'tmp', 'bench-logs');
const RESULTS_DIR = path.join(__dirname, 'results');

function boundedInt(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function config() {
  const connections = (process.env.BENCH_CONNECTIONS || '1,16,64').split(',').map((part) => {
    const value = Number(part.trim());
    if (!Number.isInteger(value) || value < 1 || value > 1024) throw new Error('BENCH_CONNECTIONS must list integers from 1 to 1024');
    return value;
  });
  return {
    connections,
    durationSeconds: boundedInt('BENCH_DURATION', 8, 1, 120),
    warmupSeconds: boundedInt('BENCH_WARMUP', 2, 0, 60),
    ttfbRequests: boundedInt('BENCH_TTFB_REQUESTS', 200, 1, 5000),
    ttfbWarmup: 10,
    portkeyShim: process.env.BENCH_PORTKEY_SHIM !== '0',
    settleMaxMs: 10_000,
  };
}

const log = (message) => console.log(`[bench] ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Undo steps, run newest first, once. */
function createCleanup() {
  const steps = [];
  let running = null;
  return {
    add(name, fn) {
      steps.push({ name, fn });
    },
    run() {
      running ??= (async () => {
        while (steps.length) {
          const { name, fn } = steps.pop();
          try {
            await Promise.race([fn(), sleep(20_000).then(() => log(`stopping ${name} took over 20 s; moving on`))]);
          } catch (error) {
            log(`stopping ${name} failed: ${error.message}`);
          }
        }
      })();
      return running;
    },
  };
}

const MESSAGES = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Say hello.' },
];
const chatBody = (model, stream) => JSON.stringify({ model, messages: MESSAGES, max_tokens: 16, ...(stream ? { stream: true } : {}) });

/** The text of a Chat Completions SSE body: every `choices[].delta.content`, concatenated. */
function streamedContent(text) {
  let content = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line.startsWith('data: [DONE]')) continue;
    try {
      for (const choice of JSON.parse(line.slice(6)).choices ?? []) content += choice.delta?.content ?? '';
    } catch {
      return null;
    }
  }
  return content;
}

async function verify(target, mock) {
  const before = await mock.stats();
  const plain = await probe({ url: target.url, headers: target.headers, body: chatBody(target.model, false) });
  let content;
  try {
    content = JSON.parse(plain.body).choices?.[0]?.message?.content;
  } catch {
    content = undefined;
  }
  if (plain.status !== 200 || content !== CONTENT.join('')) {
    throw new Error(`non-streaming request answered ${plain.status}: ${plain.body.slice(0, 300)}`);
  }
  const streamed = await probe({ url: target.url, headers: target.headers, body: chatBody(target.model, true) });
  const text = streamed.body;
  if (streamed.status !== 200 || !text.trimEnd().endsWith('data: [DONE]') || streamedContent(text) !== CONTENT.join('')) {
    throw new Error(`streaming request answered ${streamed.status}: ${text.slice(0, 300)}`);
  }
  const after = await mock.stats();
  if (after.completions !== before.completions + 1 || after.streams !== before.streams + 1) {
    throw new Error(`the mock upstream did not see exactly one call of each kind (before ${JSON.stringify(before)}, after ${JSON.stringify(after)})`);
  }
}

async function main() {
  const settings = config();
  const cleanup = createCleanup();
  const notes = [];
  let interrupted = false;
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything the bench started...`);
    stopCurrent();
    void cleanup.run().then(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const onUnexpectedExit = (id, code, signal) => {
    const note = `${id} exited during the run (${signal ?? `code ${code}`})`;
    notes.push(note);
    log(note);
  };
  const checkInterrupted = () => {
    if (interrupted) throw new Error('interrupted');
  };

  const startedAt = new Date();
  try {
    const upstreamKey = `sk-bench-${randomBytes(12).toString('hex')}`;
    const mock = await startMockUpstream();
    cleanup.add('mock upstream', () => mock.stop());
    log(`mock upstream on ${mock.url}`);
    checkInterrupted();

    const ours = await startOurGateway({ mockUrl: mock.url, upstreamKey, logDir: LOG_DIR, cleanup, log, onUnexpectedExit });
    log(`our gateway on ${ours.url} (account ${ours.accountId}, enterprise plan)`);
    checkInterrupted();

    const portkey = await startPortkey({ logDir: LOG_DIR, cleanup, shim: settings.portkeyShim, onUnexpectedExit });
    log(`Portkey ${portkey.version} on ${portkey.url}${portkey.shim ? ' (with the fetch-headers shim, see bench/README.md)' : ''}`);
    checkInterrupted();

    const targets = [
      { name: 'mock direct', url: `${mock.url}/v1/chat/completions`, headers: { authorization: `Bearer ${upstreamKey}` }, model: 'mock', cpuGroups: [] },
      {
        name: 'our gateway',
        url: `${ours.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${ours.key}` },
        model: 'bench-model',
        cpuGroups: [...Object.keys(ours.pids), 'postgres', 'redis-server'],
      },
      { name: 'portkey', url: `${portkey.url}/v1/chat/completions`, headers: portkeyHeaders(mock.url, upstreamKey), model: 'mock', cpuGroups: ['portkey'] },
    ];
    for (const target of targets) {
      try {
        await verify(target, mock);
        target.verified = true;
        log(`verified ${target.name}: a completion and a stream went through to the mock`);
      } catch (error) {
        target.verified = false;
        const note = `${target.name} failed its check and is not measured: ${error.message}`;
        notes.push(note);
        log(note);
        if (target.name === 'mock direct') throw new Error(note);
      }
    }
    const measured = targets.filter((target) => target.verified);

    const serverPids = () => ({
      ...Object.fromEntries(Object.entries(ours.pids).map(([id, pid]) => [id, [pid]])),
      postgres: cpu.pidsNamed('postgres'),
      'redis-server': cpu.pidsNamed('redis-server'),
      portkey: [portkey.pid],
    });
    const sumGroups = (groups, names) => {
      const values = names.map((name) => groups[name]).filter((value) => typeof value === 'number');
      return values.length ? values.reduce((total, value) => total + value, 0) : null;
    };
    /**
     * Waits (bounded) until the servers are idle, so that a backlog left by one run (metering, say)
     * does not eat the next one's CPU, and until the machine as a whole is quiet (other work on a
     * shared machine skews every figure).
     */
    const settle = async () => {
      if (!cpu.available) return { waitedMs: 0 };
      const start = Date.now();
      let servers = null;
      let machineBusy = null;
      while (Date.now() - start < settings.settleMaxMs) {
        const groups = serverPids();
        const before = cpu.snapshot(groups);
        await sleep(500);
        const d = cpu.diff(before, cpu.snapshot(groups));
        servers = (sumGroups(d.groups, Object.keys(groups)) ?? 0) / d.seconds;
        machineBusy = d.machine ? d.machine.busySeconds / d.seconds : 0;
        if (servers < 0.05 && machineBusy < 0.25) return { waitedMs: Date.now() - start, servers, machineBusy };
      }
      return { waitedMs: Date.now() - start, servers, machineBusy, timedOut: true };
    };
    const settleNote = (what, settled) =>
      `before ${what} the machine did not go quiet within ${settings.settleMaxMs} ms ` +
      `(servers under test ${settled.servers.toFixed(2)} cores, whole machine ${settled.machineBusy.toFixed(2)} cores busy); measured anyway`;

    const loadRows = [];
    const totalRuns = settings.connections.length * measured.length;
    let runNumber = 0;
    for (const connections of settings.connections) {
      for (const target of measured) {
        checkInterrupted();
        runNumber++;
        const settled = await settle();
        if (settled.timedOut) notes.push(settleNote(`${target.name} c=${connections}`, settled));
        const body = chatBody(target.model, false);
        log(
          `[${runNumber}/${totalRuns}] ${target.name}, ${connections} connection(s): ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured`,
        );
        let warmup = null;
        if (settings.warmupSeconds > 0) {
          warmup = await closedLoop({ url: target.url, headers: target.headers, body, connections, durationSeconds: settings.warmupSeconds });
          checkInterrupted();
        }
        const groups = serverPids();
        await mock.eventLoopUtilization();
        const before = cpu.snapshot(groups);
        const result = await closedLoop({ url: target.url, headers: target.headers, body, connections, durationSeconds: settings.durationSeconds });
        const usage = cpu.diff(before, cpu.snapshot(groups));
        const mockBusy = await mock.eventLoopUtilization();
        checkInterrupted();
        const ok = result['2xx'];
        const serverCpu = sumGroups(usage.groups, target.cpuGroups);
        const ownCpu = sumGroups(usage.groups, Object.keys(groups));
        loadRows.push({
          target: target.name,
          connections,
          durationSeconds: result.duration,
          okResponses: ok,
          okPerSecond: ok / result.duration,
          autocannonRequestsPerSecondAverage: result.requests.average,
          latencyMs: result.exact,
          autocannonLatencyMs: {
            p50: result.latency.p50,
            p90: result.latency.p90,
            p99: result.latency.p99,
            max: result.latency.max,
            mean: result.latency.average,
          },
          errors: result.errors + result.timeouts,
          socketErrors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          statusCodeStats: result.statusCodeStats,
          warmup: warmup && {
            okResponses: warmup['2xx'],
            errors: warmup.errors + warmup.timeouts,
            non2xx: warmup.non2xx,
            statusCodeStats: warmup.statusCodeStats,
          },
          serverCpuMsPerRequest: target.cpuGroups.length && serverCpu !== null && ok > 0 ? (serverCpu * 1000) / ok : null,
          cpuSeconds: {
            ...usage.groups,
            'bench process (load generator + mock thread)': usage.self,
            'rest of the machine': usage.machine && usage.self !== null ? usage.machine.busySeconds - (ownCpu ?? 0) - usage.self : null,
            machineCapacity: usage.machine?.totalSeconds ?? null,
          },
          mockThreadBusy: mockBusy,
          settle: settled,
        });
      }
    }
    for (const row of loadRows) {
      const base = loadRows.find((other) => other.target === 'mock direct' && other.connections === row.connections);
      row.addedP50Ms = row.target === 'mock direct' || !base || row.latencyMs.p50 === null ? null : row.latencyMs.p50 - base.latencyMs.p50;
    }

    const ttfbRows = [];
    for (const target of measured) {
      checkInterrupted();
      const settled = await settle();
      if (settled.timedOut) notes.push(settleNote(`TTFB ${target.name}`, settled));
      log(`TTFB: ${target.name}, ${settings.ttfbRequests} sequential streaming requests (after ${settings.ttfbWarmup} unmeasured)`);
      const result = await ttfb({
        url: target.url,
        headers: target.headers,
        body: chatBody(target.model, true),
        count: settings.ttfbRequests,
        warmup: settings.ttfbWarmup,
        shouldStop: () => interrupted,
      });
      ttfbRows.push({ target: target.name, ...result, settle: settled });
    }
    checkInterrupted();
    for (const row of ttfbRows) {
      const base = ttfbRows.find((other) => other.target === 'mock direct');
      row.addedP50Ms = row.target === 'mock direct' || !base || row.firstByteMs.p50 === null ? null : row.firstByteMs.p50 - base.firstByteMs.p50;
    }

    const mockStats = await mock.stats();
    if (mockStats.rejected || mockStats.withoutAuth)
      notes.push(`the mock refused ${mockStats.rejected} request(s); ${mockStats.withoutAuth} came without a bearer key`);
    const logs = summarizeLogs(LOG_DIR);
    const foreign = loadRows.filter((row) => row.cpuSeconds['rest of the machine'] > 0.2 * row.durationSeconds);
    if (foreign.length) {
      notes.push(
        `other processes on the machine were busy during ${foreign.length} run(s) (over 0.2 cores on average): ` +
          foreign
            .map((row) => `${row.target} c=${row.connections}: ${(row.cpuSeconds['rest of the machine'] / row.durationSeconds).toFixed(2)} cores`)
            .join('; '),
      );
    }

    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      loadAverageAtEnd: os.loadavg(),
    };
    console.log('');
    console.log(`Non-streaming chat completions, closed loop: ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per row`);
    console.log(`(${machine.cpus} CPUs, ${machine.cpuModel}; load generator, mock and servers share them; latencies are of 2xx answers)`);
    console.log('');
    console.log(loadTable(loadRows));
    console.log('');
    console.log(`Streaming time to first byte: ${settings.ttfbRequests} sequential requests per target, one keep-alive connection`);
    console.log('');
    console.log(ttfbTable(ttfbRows));
    console.log('');
    if (logs.some((file) => file.lines > 0)) {
      console.log(`Service logs (${path.relative(root, LOG_DIR)}/, LOG_LEVEL=warn):`);
      for (const file of logs) {
        console.log(`  ${file.name}: ${file.lines} line(s)`);
        for (const line of file.first) console.log(`    ${line}`);
      }
      console.log('');
    }
    for (const note of notes) console.log(`note: ${note}`);

    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const stamp = startedAt
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z'); // ISO 8601 basic, e.g. 20260122T031500Z
    const file = path.join(RESULTS_DIR, `${stamp}.json`);
    const record = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      settings,
      targets: {
        mock: { url: mock.url, stats: mockStats },
        ourGateway: { url: ours.url, model: 'bench-model', privateNats: ours.privateNats, logLevel: 'warn', processes: Object.keys(ours.pids) },
        portkey: { url: portkey.url, version: portkey.version, fetchHeadersShim: portkey.shim },
        verified: Object.fromEntries(targets.map((target) => [target.name, target.verified])),
      },
      requestBody: JSON.parse(chatBody('<model>', false)),
      load: loadRows,
      ttfb: ttfbRows,
      logs,
      notes,
    };
    fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    console.log(`figures written to ${path.relative(root, file)}`);
  } catch (error) {
    if (interrupted) return; // the signal handler stops everything and exits
    console.error(`bench failed: ${error.stack ?? error.message}`);
    await cleanup.run();
    process.exit(1);
  }
  if (interrupted) return;
  log('stopping everything the bench started...');
  await cleanup.run();
  process.exit(0);
}

/** Line counts of the service logs and their first lines (warnings and errors at LOG_LEVEL=warn). */
function summarizeLogs(dir) {
  let names = [];
  try {
    names = fs
      .readdirSync(dir)
      .filter((name) => name.endsWith('.log'))
      .sort();
  } catch {
    return [];
  }
  return names.map((name) => {
    let lines = fs
      .readFileSync(path.join(dir, name), 'utf8')
      .split('\n')
      .filter((line) => line.trim());
    lines = lines.map((line) => line.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, ''));
    if (name === 'portkey.log')
      lines = lines.filter((line) => !/Starting AI Gateway|AI Gateway is running|http:\/\/localhost|Ready for connections/.test(line));
    return { name, lines: lines.length, first: lines.slice(0, 5).map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line)) };
  });
}

main();
