'use strict';
/**
 * npm run bench: the gateway's own overhead, next to calling the upstream directly and next to the
 * Portkey gateway, with the same load against the same local mock upstream. See bench/README.md.
 *
 * 1. a mock OpenAI Chat Completions upstream (worker thread, node:http, keep-alive);
 * 2. our suite from dist/ (as the end-to-end tests start it) with a catalog of one model routed to
 *    the mock, and an enterprise account made with the admin CLI;
 * 3. Portkey from node_modules, pointed at the same mock through its headers;
 * 4. for each concurrency, each target: warm-up, then a measured closed-loop autocannon run; for our
 *    gateway the row closes only when metering has caught up (the ledger holds every request
 *    served; its CPU until then counts) and the ledger check passed (one entry per 2xx answer);
 *    at 64 connections, right after our row, the same load again authorised by a proxy key with 3
 *    budget windows beside its allocation (created with the account's master key), its ledger rows
 *    charged to that key, compared with our plain row (the master key);
 * 5. the same with a ~16 KB prompt that differs per request;
 * 6. sequential streaming requests per target for time to first byte;
 * 7. N concurrent paced streams per target (64, 256, 1024, 2048), escalating until a level stalls
 *    or fails: stall-free N and the RSS per 1000 open streams; then the GetBusbar method's streams
 *    (64 deltas 20 ms apart, a stall over 200 ms, a level sustained under 0.1 % failed) the same
 *    way, and one such stream at a time for the added time to first byte and inter-chunk p99;
 * 8. tables with the ratios against Portkey and the issue's goals, every figure in
 *    bench/results/<timestamp>.json; the exit status is 1 when a ledger check failed;
 * 9. everything started is stopped again, also on failure and Ctrl-C.
 *
 * Knobs: see config() below and bench/README.md.
 */
require('../tools/scripts/lib/runtime').assertSupportedRuntime('npm run bench');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { root } = require('../tools/scripts/lib/suite');
const cpu = require('./lib/cpu');
const { openLedger } = require('./lib/ledger');
const { closedLoop, ttfb, probe, stopCurrent, summarize } = require('./lib/load');
const { startMockUpstream, CONTENT, BUSBAR } = require('./lib/mock-upstream');
const { startOurGateway, createBudgetKey, keyBudgets, DATABASE, REDIS_DB } = require('./lib/our-suite');
const { startPortkey, portkeyHeaders } = require('./lib/portkey');
const { bigPromptBodies, chatBody } = require('./lib/prompts');
const { createCleanup } = require('./lib/cleanup');
const { boundedInt, boundedList, resultStamp } = require('./lib/settings');
const { busbarC1Table, loadTable, keyWindowsTable, ttfbTable, streamsTable, goalLines, addRatios } = require('./lib/report');
const { holdStreams, openFilesLimit } = require('./lib/streams');

const LOG_DIR = path.join(root, 'tmp', 'bench-logs');
const RESULTS_DIR = path.join(__dirname, 'results');
/**
 * Credits of the budget-window key's allocation and of each of its windows: within the enterprise
 * plan's daily limit (10000, which caps an allocation), and thousands of times what a whole run
 * spends (a small-prompt request costs about 2e-7 credits at the bench catalog's prices, so even
 * 120 s at 10,000 req/s stay under 1 credit), so no request is refused for its budget.
 */
const KEY_BUDGET_CREDITS = 1000;

function config() {
  const streamSeconds = boundedInt('BENCH_STREAM_SECONDS', 10, 1, 120);
  const streamChunks = boundedInt('BENCH_STREAM_CHUNKS', 200, 2, 4000);
  return {
    connections: boundedList('BENCH_CONNECTIONS', '1,16,64', 1, 1024),
    keyWindows: boundedInt('BENCH_KEY_WINDOWS', 3, 0, 8),
    keyWindowsConnections: boundedList('BENCH_KEY_WINDOWS_CONNECTIONS', '64', 1, 1024),
    keyBudgetCredits: KEY_BUDGET_CREDITS,
    durationSeconds: boundedInt('BENCH_DURATION', 8, 1, 120),
    warmupSeconds: boundedInt('BENCH_WARMUP', 2, 0, 60),
    catchUpSeconds: boundedInt('BENCH_CATCHUP_SECONDS', 60, 5, 600),
    bigConnections: boundedList('BENCH_BIG_CONNECTIONS', '64', 1, 1024),
    bigPromptBytes: boundedInt('BENCH_BIG_PROMPT_BYTES', 16384, 1024, 262144),
    ttfbRequests: boundedInt('BENCH_TTFB_REQUESTS', 200, 0, 5000),
    ttfbWarmup: 10,
    streams: boundedList('BENCH_STREAMS', '64,256,1024,2048,4096', 1, 8192).sort((a, b) => a - b),
    streamSeconds,
    streamChunks,
    streamIntervalMs: (streamSeconds * 1000) / streamChunks,
    streamRampMs: boundedInt('BENCH_STREAM_RAMP_MS', 1500, 0, 60_000),
    stallMs: boundedInt('BENCH_STALL_MS', 1000, 50, 60_000),
    busbarStreams: boundedList('BENCH_BUSBAR_STREAMS', '64,256,1024,2048', 1, 8192).sort((a, b) => a - b),
    busbarC1Streams: boundedInt('BENCH_BUSBAR_C1', 10, 0, 1000),
    portkeyShim: process.env.BENCH_PORTKEY_SHIM !== '0',
    settleMaxMs: 10_000,
    database: DATABASE,
    redisDb: REDIS_DB,
  };
}

const log = (message) => console.log(`[bench] ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A paced stream's request: room for every chunk the mock sends (one token each) within max_tokens. */
const pacedBody = (model, chunks) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'Write a long answer, slowly.' }], max_tokens: chunks + 16, stream: true });

/** What a held level's line adds: how many of its streams were open at once, and whether every level tried was held. */
function levelNotes({ stallFreeN, peakOpen, heldEveryLevel }) {
  const notes = [];
  if (peakOpen !== undefined && stallFreeN > 0) notes.push(`at most ${peakOpen} open at once`);
  if (heldEveryLevel) notes.push('held every level tried');
  return notes.length ? ` (${notes.join('; ')})` : '';
}

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
  const cleanup = createCleanup(log);
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
  let ledgerFailed = false;
  try {
    const maxStreams = Math.max(0, ...settings.streams);
    const filesLimit = openFilesLimit();
    // The bench process holds the client side of every stream and the mock's side of every upstream
    // call; the gateways (started from here, so with the same limit) a socket per stream each way.
    if (maxStreams && filesLimit !== null && filesLimit < 2 * maxStreams + 1024) {
      const note =
        `the open-files limit is ${filesLimit}, below the ${2 * maxStreams + 1024} that ${maxStreams} streams need ` +
        '(client and mock sockets in this process, twice that in the gateways): raise it (ulimit -n 65536) or lower BENCH_STREAMS; ' +
        'levels that run out of descriptors fail with EMFILE';
      notes.push(note);
      log(note);
    }

    const upstreamKey = `sk-bench-${randomBytes(12).toString('hex')}`;
    const mock = await startMockUpstream({ paced: { chunks: settings.streamChunks, intervalMs: settings.streamIntervalMs } });
    cleanup.add('mock upstream', () => mock.stop());
    log(`mock upstream on ${mock.url}`);
    checkInterrupted();

    const ours = await startOurGateway({ mockUrl: mock.url, upstreamKey, logDir: LOG_DIR, cleanup, log, onUnexpectedExit });
    log(`our gateway on ${ours.url} (account ${ours.accountId}, enterprise plan)`);
    checkInterrupted();

    const ledger = await openLedger({ databaseUrl: ours.databaseUrl, natsUrl: ours.natsUrl });
    cleanup.add('ledger connections', () => ledger.close());
    if (!ledger.jetstream) notes.push('the JetStream consumer could not be read: metering catch-up is judged by the ledger row count alone');

    const portkey = await startPortkey({ logDir: LOG_DIR, cleanup, shim: settings.portkeyShim, onUnexpectedExit });
    log(`Portkey ${portkey.version} on ${portkey.url}${portkey.shim ? ' (with the fetch-headers shim, see bench/README.md)' : ''}`);
    checkInterrupted();

    const portkeyTargetHeaders = portkeyHeaders(mock.url, upstreamKey);
    const targets = [
      {
        name: 'mock direct',
        url: `${mock.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${upstreamKey}` },
        model: 'mock',
        pacedModel: 'mock-paced',
        busbarModel: 'mock-busbar',
        cpuGroups: [],
        rssPids: {},
      },
      {
        name: 'our gateway',
        url: `${ours.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${ours.key}` },
        model: 'bench-model',
        pacedModel: 'bench-model-paced',
        busbarModel: 'bench-model-busbar',
        cpuGroups: [...Object.keys(ours.pids), 'postgres', 'redis-server'],
        metered: true,
        rssPids: { 'edge-gateway': ours.pids['edge-gateway'], 'inference-router': ours.pids['inference-router'] },
      },
      {
        name: 'portkey',
        url: `${portkey.url}/v1/chat/completions`,
        headers: portkeyTargetHeaders,
        model: 'mock',
        pacedModel: 'mock-paced',
        busbarModel: 'mock-busbar',
        cpuGroups: ['portkey'],
        rssPids: { portkey: portkey.pid },
      },
    ];
    // The budget windows' row: our gateway again, authorised by a proxy key with budget windows beside
    // its allocation, made over the API with the account's master key (ours.key), as a customer would.
    const windowConnections = settings.keyWindowsConnections.filter((connections) => settings.connections.includes(connections));
    const windowTargetName = settings.keyWindows ? `our gateway, ${settings.keyWindows}-window key` : 'our gateway, proxy key';
    const skippedWindowConnections = settings.keyWindowsConnections.filter((connections) => !settings.connections.includes(connections));
    if (skippedWindowConnections.length && settings.connections.length)
      notes.push(
        `BENCH_KEY_WINDOWS_CONNECTIONS lists ${skippedWindowConnections.join(', ')}, not in BENCH_CONNECTIONS: no '${windowTargetName}' row there ` +
          '(it runs right after our plain row at the same concurrency)',
      );
    let windowTarget = null;
    if (windowConnections.length) {
      try {
        const created = await createBudgetKey({ url: ours.url, masterKey: ours.key, windows: settings.keyWindows, amount: settings.keyBudgetCredits });
        const keyId = await ledger.keyIdOf(created.key);
        if (!keyId) throw new Error('the new proxy key is not in api_keys');
        windowTarget = {
          name: windowTargetName,
          url: `${ours.url}/v1/chat/completions`,
          headers: { authorization: `Bearer ${created.key}` },
          key: created.key,
          keyId,
          budgets: created.budgets,
          comparedWith: 'our gateway',
          model: 'bench-model',
          pacedModel: 'bench-model-paced',
          cpuGroups: targets.find((target) => target.name === 'our gateway').cpuGroups,
          metered: true,
          rssPids: {},
        };
        log(
          `proxy key ${keyId} created with the master key: ` +
            created.budgets.map((budget) => `${budget.amount} credits ${budget.period} (${budget.timezone})`).join(', '),
        );
      } catch (error) {
        const note = `the proxy key with ${settings.keyWindows} budget window(s) could not be created, so '${windowTargetName}' is not measured: ${error.message}`;
        notes.push(note);
        log(note);
      }
    }
    const allTargets = windowTarget ? [...targets, windowTarget] : targets;
    for (const target of allTargets) {
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

    // PostgreSQL processes that work for the bench's database (not other checkouts' tests on the same
    // server), as seen by this machine; all of them when that cannot be told.
    let postgresPids = cpu.pidsNamed('postgres');
    const refreshPostgresPids = async () => {
      postgresPids = await ledger.postgresPids(cpu.pidsNamed('postgres'));
    };
    await refreshPostgresPids();
    const serverPids = () => ({
      ...Object.fromEntries(Object.entries(ours.pids).map(([id, pid]) => [id, [pid]])),
      postgres: postgresPids,
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
    const catchUpMs = settings.catchUpSeconds * 1000;
    const recordLedger = (row) => {
      if (!row.ledger) return;
      if (!row.ledger.pass) ledgerFailed = true;
      log(`  ledger ${row.ledger.pass ? 'PASS' : `FAIL: ${row.ledger.problems.join('; ')}`}`);
    };
    /**
     * After a streaming run of ours (TTFB, streams): waits for metering to catch up, then checks the
     * ledger holds one entry per 2xx id; `allowedExtra` rows may come from requests that were not 2xx.
     */
    const checkRowLedger = async (row, ids, ok, rowsBefore, allowedExtra) => {
      // Each 2xx answer's own row is waited for: rows of streams cut at the same level may reach the
      // count first, and a check made then would report charges missing that are only late.
      const caught = await ledger.waitCaughtUp({ atLeast: rowsBefore + ok, maxMs: catchUpMs, snapshot: () => null, shouldStop: () => interrupted, ids });
      row.meteringCatchUp = { caughtUp: caught.caughtUp, afterLoadMs: caught.caughtUpAfterMs, backlog: caught.backlog };
      row.ledger = await ledger.check({ ids, ok, rowsBefore, rowsAfter: caught.count, allowedExtra, caughtUp: caught.caughtUp });
      recordLedger(row);
    };

    /**
     * One non-streaming row: warm-up, measured closed loop, and for our gateway metering's catch-up
     * (its CPU counted) and the ledger check.
     */
    const measureLoad = async ({ scenario, target, connections, body, label }) => {
      const settled = await settle();
      if (settled.timedOut) notes.push(settleNote(`${target.name} ${scenario} c=${connections}`, settled));
      log(`${label} ${target.name}, ${scenario}, ${connections} connection(s): ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured`);
      const metered = Boolean(target.metered);
      // A proxy key's budgets (GET /v1/key) before and after: every one must show the row's spend.
      const readBudgets = () => keyBudgets({ url: ours.url, key: target.key }).catch((error) => ({ error: error.message }));
      const budgetsBefore = target.keyId ? await readBudgets() : null;
      let warmup = null;
      let warmupCatchUp = null;
      const rowsAtStart = metered ? await ledger.rowCount() : null;
      if (settings.warmupSeconds > 0) {
        warmup = await closedLoop({ url: target.url, headers: target.headers, body, connections, durationSeconds: settings.warmupSeconds });
        checkInterrupted();
      }
      if (metered) {
        // The warm-up's requests are metered too: let them land before the measured window opens.
        warmupCatchUp = await ledger.waitCaughtUp({
          atLeast: rowsAtStart + (warmup?.['2xx'] ?? 0),
          maxMs: catchUpMs,
          snapshot: () => null,
          shouldStop: () => interrupted,
        });
        if (!warmupCatchUp.caughtUp)
          notes.push(`${target.name} ${scenario} c=${connections}: metering did not catch up with the warm-up within ${settings.catchUpSeconds} s`);
        await refreshPostgresPids();
      }
      const rowsBefore = metered ? await ledger.rowCount() : null;
      const groups = serverPids();
      await mock.eventLoopUtilization();
      const before = cpu.snapshot(groups);
      const result = await closedLoop({ url: target.url, headers: target.headers, body, connections, durationSeconds: settings.durationSeconds });
      const atLoadEnd = cpu.snapshot(groups);
      const mockBusy = await mock.eventLoopUtilization();
      checkInterrupted();
      const ok = result['2xx'];
      let catchUp = null;
      let ledgerCheck = null;
      let end = atLoadEnd;
      if (metered) {
        const caught = await ledger.waitCaughtUp({
          atLeast: rowsBefore + ok,
          maxMs: catchUpMs,
          snapshot: () => cpu.snapshot(groups),
          shouldStop: () => interrupted,
          ids: result.requestIds,
        });
        end = caught.snapshot;
        catchUp = { caughtUp: caught.caughtUp, afterLoadMs: caught.caughtUpAfterMs, backlog: caught.backlog };
        ledgerCheck = await ledger.check({
          ids: result.requestIds,
          ok,
          rowsBefore,
          rowsAfter: caught.count,
          // cut at the end of the run (at most one per connection), or answered other than 2xx
          allowedExtra: connections + result.non2xx + result.errors + result.timeouts,
          caughtUp: caught.caughtUp,
          ...(target.keyId ? { keyId: target.keyId } : {}),
        });
      }
      let budgets = null;
      if (budgetsBefore && ledgerCheck) {
        budgets = { before: budgetsBefore, after: await readBudgets() };
        const problems = budgetProblems(budgets.before, budgets.after);
        if (problems.length) ledgerCheck = { ...ledgerCheck, pass: false, problems: [...ledgerCheck.problems, ...problems] };
      }
      const usage = cpu.diff(before, end);
      const duringRun = cpu.diff(before, atLoadEnd);
      const serverCpu = sumGroups(usage.groups, target.cpuGroups);
      const serverCpuDuringRun = sumGroups(duringRun.groups, target.cpuGroups);
      const ownCpu = sumGroups(usage.groups, Object.keys(groups));
      const row = {
        scenario,
        target: target.name,
        ...(target.comparedWith ? { comparedWith: target.comparedWith, keyWindows: settings.keyWindows } : {}),
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
          meteringCaughtUpAfterMs: warmupCatchUp?.caughtUpAfterMs ?? null,
        },
        // CPU from the start of the measured window until metering caught up (our gateway), or until the run ended (the others)
        serverCpuMsPerRequest: target.cpuGroups.length && serverCpu !== null && ok > 0 ? (serverCpu * 1000) / ok : null,
        serverCpuMsPerRequestDuringRun: target.cpuGroups.length && serverCpuDuringRun !== null && ok > 0 ? (serverCpuDuringRun * 1000) / ok : null,
        cpuWindowSeconds: usage.seconds,
        meteringCatchUp: catchUp,
        ledger: ledgerCheck,
        ...(budgets ? { keyBudgets: budgets } : {}),
        cpuSeconds: {
          ...usage.groups,
          'bench process (load generator + mock thread)': usage.self,
          'rest of the machine': usage.machine && usage.self !== null ? usage.machine.busySeconds - (ownCpu ?? 0) - usage.self : null,
          machineCapacity: usage.machine?.totalSeconds ?? null,
        },
        mockThreadBusy: mockBusy,
        settle: settled,
      };
      if (catchUp)
        log(
          `  metering ${catchUp.caughtUp ? `caught up ${(catchUp.afterLoadMs / 1000).toFixed(1)} s after the run` : `had not caught up after ${settings.catchUpSeconds} s`}`,
        );
      recordLedger(row);
      return row;
    };

    const loadRows = [];
    const bigRows = [];
    const windowRuns = windowTarget?.verified && measured.some((target) => target.name === 'our gateway') ? windowConnections : [];
    const totalRuns = (settings.connections.length + settings.bigConnections.length) * measured.length + windowRuns.length;
    let runNumber = 0;
    const smallBody = (target) => chatBody(target.model, false);
    for (const connections of settings.connections) {
      for (const target of measured) {
        checkInterrupted();
        runNumber++;
        loadRows.push(await measureLoad({ scenario: 'small prompt', target, connections, body: smallBody(target), label: `[${runNumber}/${totalRuns}]` }));
        if (target.name === 'our gateway' && windowRuns.includes(connections)) {
          // right after our plain row, so the two share the machine's state as far as the bench can tell
          checkInterrupted();
          runNumber++;
          const row = await measureLoad({
            scenario: 'small prompt',
            target: windowTarget,
            connections,
            body: smallBody(windowTarget),
            label: `[${runNumber}/${totalRuns}]`,
          });
          const after = row.keyBudgets?.after;
          if (Array.isArray(after)) log(`  the key's budgets, credits used so far: ${after.map((budget) => `${budget.period} ${budget.used}`).join(', ')}`);
          loadRows.push(row);
        }
      }
    }
    const bigSamples = {};
    for (const connections of settings.bigConnections) {
      for (const target of measured) {
        checkInterrupted();
        runNumber++;
        const bodies = bigPromptBodies({ model: target.model, bytes: settings.bigPromptBytes });
        bigSamples[target.name] = bodies.sample.length;
        bigRows.push(
          await measureLoad({
            scenario: `${Math.round(settings.bigPromptBytes / 1024)} KB prompt`,
            target,
            connections,
            body: bodies.next,
            label: `[${runNumber}/${totalRuns}]`,
          }),
        );
      }
    }
    for (const rows of [loadRows, bigRows]) addRatios(rows);

    const ttfbRows = [];
    for (const target of settings.ttfbRequests > 0 ? measured : []) {
      checkInterrupted();
      const settled = await settle();
      if (settled.timedOut) notes.push(settleNote(`TTFB ${target.name}`, settled));
      log(`TTFB: ${target.name}, ${settings.ttfbRequests} sequential streaming requests (after ${settings.ttfbWarmup} unmeasured)`);
      const rowsBefore = target.metered
        ? (await ledger.waitCaughtUp({ atLeast: 0, maxMs: catchUpMs, snapshot: () => null, shouldStop: () => interrupted })).count
        : null;
      const result = await ttfb({
        url: target.url,
        headers: target.headers,
        body: chatBody(target.model, true),
        count: settings.ttfbRequests,
        warmup: settings.ttfbWarmup,
        shouldStop: () => interrupted,
      });
      const { okRequestIds, ...figures } = result;
      const row = { target: target.name, ...figures, settle: settled };
      // the unmeasured requests before them, and the failed ones, may add rows too
      if (target.metered) await checkRowLedger(row, okRequestIds, result.ok, rowsBefore, result.warmupAttempted + (result.attempted - result.ok));
      ttfbRows.push(row);
    }
    checkInterrupted();
    for (const row of ttfbRows) {
      const base = ttfbRows.find((other) => other.target === 'mock direct');
      row.addedP50Ms = row.target === 'mock direct' || !base || row.firstByteMs.p50 === null ? null : row.firstByteMs.p50 - base.firstByteMs.p50;
    }

    // Streams: N concurrent paced streams per target, escalating until a level stalls or fails.
    /**
     * One stream scenario: `levels` concurrent streams per target, escalating until a level does not
     * pass; returns its rows and, per target, the largest level it passed.
     */
    const streamLevels = async ({ name, levels, chunks, seconds, modelOf, stallMs, passes }) => {
      const rows = [];
      const timeoutMs = seconds * 2000 + 30_000;
      for (const target of levels.length ? measured : []) {
        for (const n of levels) {
          checkInterrupted();
          const settled = await settle();
          if (settled.timedOut) notes.push(settleNote(`${name} ${target.name} N=${n}`, settled));
          log(`${name}: ${target.name}, ${n} concurrent streams of ${chunks} chunks over ${seconds} s, opened over ${settings.streamRampMs} ms`);
          // Whatever ran before (the TTFB requests, a previous level) must be in the ledger before the count is taken.
          const rowsBefore = target.metered
            ? (await ledger.waitCaughtUp({ atLeast: 0, maxMs: catchUpMs, snapshot: () => null, shouldStop: () => interrupted })).count
            : null;
          await mock.resetPacedLateness();
          await mock.eventLoopUtilization();
          const groups = serverPids();
          const before = cpu.snapshot(groups);
          const result = await holdStreams({
            url: target.url,
            headers: target.headers,
            body: pacedBody(modelOf(target), chunks),
            streams: n,
            rampMs: settings.streamRampMs,
            stallMs,
            timeoutMs,
            rssPids: target.rssPids,
            shouldStop: () => interrupted,
          });
          // The servers' CPU while the level ran (a stream's usage event may be metered after it ends), per chunk served.
          const usage = cpu.diff(before, cpu.snapshot(groups));
          const serverCpu = sumGroups(usage.groups, target.cpuGroups);
          const mockBusy = await mock.eventLoopUtilization();
          const mockStats = await mock.stats();
          checkInterrupted();
          const { okRequestIds, ...figures } = result;
          const row = {
            target: target.name,
            ...figures,
            serverCpuMicrosPerChunk: target.cpuGroups.length && serverCpu !== null && result.ok > 0 ? (serverCpu * 1e6) / (result.ok * chunks) : null,
            cpuSeconds: {
              ...Object.fromEntries(target.cpuGroups.map((name) => [name, usage.groups[name] ?? null])),
              'bench process (load generator + mock thread)': usage.self,
              machineCapacity: usage.machine?.totalSeconds ?? null,
            },
            cpuWindowSeconds: usage.seconds,
            mockThreadBusy: mockBusy,
            mockMaxChunkLateMs: mockStats.pacedMaxLateMs,
            settle: settled,
          };
          row.passed = passes(result, n);
          if (target.metered) await checkRowLedger(row, okRequestIds, result.ok, rowsBefore, result.failed);
          log(
            `  ${row.ok}/${n} ok, ${row.failed} failed, ${row.stalled} stalled; largest gap p99 ${row.maxGapMs.p99?.toFixed(0) ?? '-'} ms; ` +
              `load generator event-loop delay max ${row.clientEventLoopDelayMs.max.toFixed(0)} ms`,
          );
          if (row.clientEventLoopDelayMs.max > stallMs / 2)
            notes.push(
              `${name} ${target.name} N=${n}: the load generator's own event loop was delayed up to ${row.clientEventLoopDelayMs.max.toFixed(0)} ms, ` +
                'so part of the gaps it measured may be its own',
            );
          rows.push(row);
          if (!row.passed) break; // stop escalating this target
        }
      }
      const sustained = Object.fromEntries(
        measured.map((target) => {
          const own = rows.filter((row) => row.target === target.name);
          const passed = own.filter((row) => row.passed).map((row) => row.streams);
          const stallFreeN = passed.length ? Math.max(...passed) : 0;
          // How many of the held level's streams were open together (a target that starts streams only as others end has fewer).
          const peakOpen = own.find((row) => row.passed && row.streams === stallFreeN)?.peakOpen;
          return [target.name, { stallFreeN, peakOpen, heldEveryLevel: own.length === levels.length && own.every((row) => row.passed) }];
        }),
      );
      return { rows, sustained };
    };
    const { rows: streamRows, sustained: stallFree } = await streamLevels({
      name: 'streams',
      levels: settings.streams,
      chunks: settings.streamChunks,
      seconds: settings.streamSeconds,
      modelOf: (target) => target.pacedModel,
      stallMs: settings.stallMs,
      passes: (result, n) => result.failed === 0 && result.stalled === 0 && result.attempted === n,
    });
    // The GetBusbar method: 64 deltas 20 ms apart; a stall is a gap over 10× the pace; a level is
    // sustained when no stream stalls and under 0.1 % of them fail.
    const { rows: busbarRows, sustained: busbarSustained } = await streamLevels({
      name: 'busbar streams',
      levels: settings.busbarStreams,
      chunks: BUSBAR.chunks,
      seconds: (BUSBAR.chunks * BUSBAR.intervalMs) / 1000,
      modelOf: (target) => target.busbarModel,
      stallMs: 10 * BUSBAR.intervalMs,
      passes: (result, n) => result.stalled === 0 && result.attempted === n && result.failed < n * 0.001,
    });
    // And at one connection: the time to the first byte and the gaps between chunks, one stream after another.
    const busbarC1Rows = [];
    for (const target of settings.busbarC1Streams ? measured : []) {
      checkInterrupted();
      await settle();
      log(`busbar c=1: ${target.name}, ${settings.busbarC1Streams} streams one after another`);
      const runs = [];
      for (let i = 0; i < settings.busbarC1Streams && !interrupted; i++) {
        runs.push(
          await holdStreams({
            url: target.url,
            headers: target.headers,
            body: pacedBody(target.busbarModel, BUSBAR.chunks),
            streams: 1,
            rampMs: 0,
            stallMs: 10 * BUSBAR.intervalMs,
            timeoutMs: 30_000,
            recordGaps: true,
            shouldStop: () => interrupted,
          }),
        );
      }
      busbarC1Rows.push({
        target: target.name,
        ok: runs.reduce((sum, run) => sum + run.ok, 0),
        attempted: runs.length,
        failures: runs.reduce((sum, run) => sum + run.failed, 0),
        firstByteMs: summarize(runs.flatMap((run) => run.firstByteValuesMs)),
        gapMs: summarize(runs.flatMap((run) => run.gapValuesMs)),
      });
    }
    for (const row of busbarC1Rows) {
      const base = busbarC1Rows.find((other) => other.target === 'mock direct');
      const added = (mine, theirs) => (row.target === 'mock direct' || !base || mine === null || theirs === null ? null : mine - theirs);
      row.addedFirstByteP50Ms = added(row.firstByteMs.p50, base?.firstByteMs.p50 ?? null);
      row.addedGapP99Ms = added(row.gapMs.p99, base?.gapMs.p99 ?? null);
    }

    const mockStats = await mock.stats();
    if (mockStats.rejected || mockStats.withoutAuth)
      notes.push(`the mock refused ${mockStats.rejected} request(s); ${mockStats.withoutAuth} came without a bearer key`);
    const logs = summarizeLogs(LOG_DIR);
    const foreign = [...loadRows, ...bigRows].filter((row) => row.cpuSeconds['rest of the machine'] > 0.2 * row.cpuWindowSeconds);
    if (foreign.length) {
      notes.push(
        `other processes on the machine were busy during ${foreign.length} run(s) (over 0.2 cores on average): ` +
          foreign
            .map(
              (row) => `${row.target} ${row.scenario} c=${row.connections}: ${(row.cpuSeconds['rest of the machine'] / row.cpuWindowSeconds).toFixed(2)} cores`,
            )
            .join('; '),
      );
    }
    const goals = goalLines({ loadRows, bigRows, stallFree, busbarSustained, busbarC1Rows, settings });

    // Every row's runtime: the mock runs in this process, and our services and Portkey are started
    // with this process's binary (process.execPath), so each row ran on this node.
    for (const row of [...loadRows, ...bigRows, ...ttfbRows, ...streamRows, ...busbarRows, ...busbarC1Rows]) row.node = process.version;
    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      openFilesLimit: filesLimit,
      loadAverageAtEnd: os.loadavg(),
    };
    console.log('');
    console.log(`${machine.cpus} CPUs, ${machine.cpuModel}: the load generator, the mock and every server share them.`);
    if (loadRows.length || bigRows.length) {
      console.log('');
      console.log(`Non-streaming chat completions, closed loop: ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per row`);
      console.log("(latencies are of 2xx answers; our CPU counts until metering caught up; ratios are ours / Portkey's, Portkey's value in brackets)");
    }
    if (loadRows.length) {
      console.log('');
      console.log(loadTable(loadRows));
    }
    if (loadRows.some((row) => row.vsPlain)) {
      console.log('');
      console.log(
        `Budget windows: the same small-prompt load authorised by a proxy key with ${settings.keyWindows} budget window(s) beside its allocation ` +
          `(${settings.keyBudgetCredits} credits each), against our plain row (the master key) just before it; ratios are the key's / the plain row's`,
      );
      console.log('');
      console.log(keyWindowsTable(loadRows));
    }
    if (bigRows.length) {
      console.log('');
      console.log(
        `The same with a ${Math.round(settings.bigPromptBytes / 1024)} KB prompt that differs per request (request bodies of about ${Math.max(...Object.values(bigSamples))} bytes)`,
      );
      console.log('');
      console.log(loadTable(bigRows));
    }
    if (ttfbRows.length) {
      console.log('');
      console.log(`Streaming time to first byte: ${settings.ttfbRequests} sequential requests per target, one keep-alive connection`);
      console.log('');
      console.log(ttfbTable(ttfbRows));
    }
    if (streamRows.length) {
      console.log('');
      console.log(
        `Concurrent streams: ${settings.streamChunks} chunks ${settings.streamIntervalMs.toFixed(0)} ms apart (${settings.streamSeconds} s) each, ` +
          `opened over ${settings.streamRampMs} ms; a stream stalls when two chunks arrive over ${settings.stallMs} ms apart; a target stops at its first level with a stall or failure`,
      );
      console.log('');
      console.log(streamsTable(streamRows));
      console.log('');
      for (const [name, value] of Object.entries(stallFree))
        console.log(`  ${name}: largest N without stalls or failures ${value.stallFreeN}${levelNotes(value)}`);
    }
    if (busbarRows.length) {
      console.log('');
      console.log(
        `Busbar streams (the GetBusbar method): ${BUSBAR.chunks} chunks ${BUSBAR.intervalMs} ms apart each, opened over ${settings.streamRampMs} ms; ` +
          `a stream stalls when two chunks arrive over ${10 * BUSBAR.intervalMs} ms apart; a level is sustained with no stall and under 0.1 % failed`,
      );
      console.log('');
      console.log(streamsTable(busbarRows));
      console.log('');
      for (const [name, value] of Object.entries(busbarSustained)) console.log(`  ${name}: streams sustained ${value.stallFreeN}${levelNotes(value)}`);
    }
    if (busbarC1Rows.length) {
      console.log('');
      console.log(`Busbar streams one at a time: ${settings.busbarC1Streams} per target, one after another`);
      console.log('');
      console.log(busbarC1Table(busbarC1Rows));
    }
    console.log('');
    console.log('Goals (issue #13), each against Portkey in this run:');
    for (const goal of goals) console.log(`  ${goal.status.padEnd(9)} ${goal.goal}: ${goal.detail}`);
    const ledgerRows = [...loadRows, ...bigRows, ...ttfbRows, ...streamRows, ...busbarRows].filter((row) => row.ledger);
    console.log('');
    console.log(
      `Ledger check (one ledger entry per 2xx answer, metering caught up): ${ledgerRows.filter((row) => row.ledger.pass).length}/${ledgerRows.length} row(s) PASS` +
        (ledgerFailed ? ' — FAIL, see the rows above' : ''),
    );
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
    const file = path.join(RESULTS_DIR, `${resultStamp(startedAt)}.json`);
    const record = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      settings,
      targets: {
        mock: { url: mock.url, stats: mockStats },
        ourGateway: {
          url: ours.url,
          budgetWindowKey: windowTarget && { target: windowTarget.name, keyId: windowTarget.keyId, budgets: windowTarget.budgets },
          model: 'bench-model',
          pacedModel: 'bench-model-paced',
          database: settings.database,
          redisDb: settings.redisDb,
          privateNats: ours.privateNats,
          logLevel: 'warn',
          processes: Object.keys(ours.pids),
        },
        portkey: { url: portkey.url, version: portkey.version, fetchHeadersShim: portkey.shim },
        verified: Object.fromEntries(allTargets.map((target) => [target.name, target.verified])),
      },
      requestBody: JSON.parse(chatBody('<model>', false)),
      bigPromptRequestBytes: bigSamples,
      streamRequestBody: JSON.parse(pacedBody('<model>', settings.streamChunks)),
      load: loadRows,
      bigPrompt: bigRows,
      ttfb: ttfbRows,
      streams: streamRows,
      stallFree,
      busbarStreams: busbarRows,
      busbarSustained,
      busbarOneAtATime: busbarC1Rows,
      goals,
      ledgerCheck: { pass: !ledgerFailed, rows: ledgerRows.length, failed: ledgerRows.filter((row) => !row.ledger.pass).length },
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
  if (ledgerFailed) {
    console.error('bench: the ledger check failed at one or more rows (exit status 1)');
    process.exit(1);
  }
  process.exit(0);
}

/**
 * What is wrong with a proxy key's budgets (GET /v1/key) after a row it authorised, against before:
 * every budget (the allocation and each window) must have been charged and must have room left.
 */
function budgetProblems(before, after) {
  const problems = [];
  for (const reading of [before, after]) if (reading.error) problems.push(reading.error);
  if (problems.length) return problems;
  if (!Array.isArray(after) || !Array.isArray(before) || after.length !== before.length)
    return ['GET /v1/key did not list the same budgets before and after the run'];
  after.forEach((budget, index) => {
    const name = `${budget.period} (${budget.timezone})`;
    // a window that moved on during the run (a calendar boundary passed) counts only what came after it
    const turnedOver = budget.resets_at !== before[index].resets_at;
    if (!(budget.used > before[index].used || (turnedOver && budget.used > 0)))
      problems.push(`the key's ${name} budget shows no spend from the run (used ${before[index].used} → ${budget.used})`);
    if (!(budget.remaining > 0)) problems.push(`the key's ${name} budget has nothing left: the amounts are too small for the run`);
  });
  return problems;
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
