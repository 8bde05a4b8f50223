'use strict';
/** Plain-text tables for the console. */

function fmt(value, decimals = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  return value.toFixed(decimals);
}

function signed(value, decimals = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  return `${value >= 0 ? '+' : ''}${value.toFixed(decimals)}`;
}

/** Renders rows (arrays of strings) under headers; columns after the first two are right-aligned. */
function table(headers, rows, leftAligned = 1) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((cell, i) => (i < leftAligned ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

function statusSummary(statusCodeStats) {
  const parts = Object.entries(statusCodeStats ?? {})
    .filter(([code]) => !(Number(code) >= 200 && Number(code) < 300))
    .map(([code, { count }]) => `${code}×${count}`);
  return parts.join(' ');
}

const ratio = (ours, theirs) => (typeof ours === 'number' && typeof theirs === 'number' && theirs > 0 ? ours / theirs : null);

/**
 * Fills in, for rows of one scenario: `addedP50Ms` (p50 over the mock-direct p50 at the same
 * concurrency); on our gateway's rows, `vsPortkey` (ours / Portkey's req/s, added p50 and CPU
 * per request, with Portkey's values); on a row with `comparedWith` (the budget-window key's),
 * `vsPlain` (its req/s, p50, p99 and CPU per request over those of the row it names at the same
 * concurrency, with that row's values).
 */
function addRatios(rows) {
  for (const row of rows) {
    const base = rows.find((other) => other.target === 'mock direct' && other.connections === row.connections);
    row.addedP50Ms =
      row.target === 'mock direct' || !base || row.latencyMs.p50 === null || base.latencyMs.p50 === null ? null : row.latencyMs.p50 - base.latencyMs.p50;
  }
  for (const row of rows) {
    if (row.target !== 'our gateway') continue;
    const portkey = rows.find((other) => other.target === 'portkey' && other.connections === row.connections);
    if (!portkey) continue;
    row.vsPortkey = {
      okPerSecond: ratio(row.okPerSecond, portkey.okPerSecond),
      addedP50: ratio(row.addedP50Ms, portkey.addedP50Ms),
      serverCpuMsPerRequest: ratio(row.serverCpuMsPerRequest, portkey.serverCpuMsPerRequest),
      portkey: { okPerSecond: portkey.okPerSecond, addedP50Ms: portkey.addedP50Ms, serverCpuMsPerRequest: portkey.serverCpuMsPerRequest },
    };
  }
  for (const row of rows) {
    if (!row.comparedWith) continue;
    const plain = rows.find((other) => other.target === row.comparedWith && other.connections === row.connections);
    if (!plain) continue;
    row.vsPlain = {
      target: plain.target,
      okPerSecond: ratio(row.okPerSecond, plain.okPerSecond),
      p50: ratio(row.latencyMs.p50, plain.latencyMs.p50),
      p99: ratio(row.latencyMs.p99, plain.latencyMs.p99),
      serverCpuMsPerRequest: ratio(row.serverCpuMsPerRequest, plain.serverCpuMsPerRequest),
      plain: { okPerSecond: plain.okPerSecond, p50Ms: plain.latencyMs.p50, p99Ms: plain.latencyMs.p99, serverCpuMsPerRequest: plain.serverCpuMsPerRequest },
    };
  }
}

/** `0.55× (658)`: a ratio against Portkey with Portkey's own value. */
function versus(value, theirs, decimals) {
  if (value === null || value === undefined) return '-';
  return `${value.toFixed(2)}× (${fmt(theirs, decimals)})`;
}

function ledgerCell(row) {
  if (!row.ledger) return '-';
  return row.ledger.pass ? `PASS ${row.ledger.matched}/${row.ledger.ok}` : `FAIL ${row.ledger.matched}/${row.ledger.ok}`;
}

function catchUpCell(row) {
  if (!row.meteringCatchUp) return '-';
  return row.meteringCatchUp.caughtUp ? `${(row.meteringCatchUp.afterLoadMs / 1000).toFixed(1)} s` : 'not caught up';
}

function loadTable(rows) {
  return table(
    [
      'target',
      'node',
      'conc',
      'req/s',
      'p50 ms',
      'p99 ms',
      '+p50 vs mock',
      'errors/non-2xx',
      'server CPU ms/req',
      'metering catch-up',
      'ledger',
      'req/s vs Portkey',
      '+p50 vs Portkey',
      'CPU/req vs Portkey',
    ],
    rows.map((row) => {
      const codes = statusSummary(row.statusCodeStats);
      const vs = row.vsPortkey;
      return [
        row.target,
        row.node ?? '-',
        String(row.connections),
        fmt(row.okPerSecond, 0),
        fmt(row.latencyMs.p50),
        fmt(row.latencyMs.p99),
        signed(row.addedP50Ms),
        `${row.errors} / ${row.non2xx}${codes ? ` (${codes})` : ''}`,
        fmt(row.serverCpuMsPerRequest, 3),
        catchUpCell(row),
        ledgerCell(row),
        vs ? versus(vs.okPerSecond, vs.portkey.okPerSecond, 0) : '-',
        vs ? versus(vs.addedP50, vs.portkey.addedP50Ms, 2) : '-',
        vs ? versus(vs.serverCpuMsPerRequest, vs.portkey.serverCpuMsPerRequest, 3) : '-',
      ];
    }),
    2,
  );
}

/**
 * The budget-window key's rows against our plain rows: per concurrency, each figure as
 * `plain → key (ratio×)`, the ratio being the key's over the plain row's.
 */
function keyWindowsTable(rows) {
  const pair = (plain, key, ratioValue, decimals) => `${fmt(plain, decimals)} → ${fmt(key, decimals)} (${fmt(ratioValue)}×)`;
  return table(
    ['conc', 'budgets', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'errors/non-2xx', 'ledger (key row)'],
    rows
      .filter((row) => row.vsPlain)
      .map((row) => {
        const vs = row.vsPlain;
        const codes = statusSummary(row.statusCodeStats);
        return [
          String(row.connections),
          `allocation + ${row.keyWindows} window(s)`,
          pair(vs.plain.okPerSecond, row.okPerSecond, vs.okPerSecond, 0),
          pair(vs.plain.p50Ms, row.latencyMs.p50, vs.p50, 2),
          pair(vs.plain.p99Ms, row.latencyMs.p99, vs.p99, 2),
          pair(vs.plain.serverCpuMsPerRequest, row.serverCpuMsPerRequest, vs.serverCpuMsPerRequest, 3),
          `${row.errors} / ${row.non2xx}${codes ? ` (${codes})` : ''}`,
          ledgerCell(row),
        ];
      }),
    2,
  );
}

const mib = (bytes) => (bytes === null || bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(1));

/** The servers' CPU per chunk served during a stream level, with the busiest process's share (ours: several processes). */
function serverCpuCell(row) {
  if (row.serverCpuMicrosPerChunk === null || row.serverCpuMicrosPerChunk === undefined) return '-';
  const [busiest, seconds] = Object.entries(row.cpuSeconds ?? {})
    .filter(([name, value]) => typeof value === 'number' && !name.startsWith('bench process') && name !== 'machineCapacity')
    .sort((a, b) => b[1] - a[1])[0] ?? [null, null];
  const busy = busiest && row.cpuWindowSeconds ? ` (${busiest} ${(seconds / row.cpuWindowSeconds).toFixed(2)} cores)` : '';
  return `${fmt(row.serverCpuMicrosPerChunk, 1)}${busy}`;
}

function streamsTable(rows) {
  return table(
    [
      'target',
      'node',
      'N',
      'ok',
      'failed',
      'stalled',
      'open at once',
      'largest gap p50/p99/max ms',
      'TTFB p99 ms',
      'client lag max ms',
      'server CPU µs/chunk',
      'RSS MiB per 1000 streams',
      'ledger',
      'level',
    ],
    rows.map((row) => {
      const rss = Object.entries(row.rss ?? {})
        .filter(([name]) => name !== 'inference-router')
        .map(([name, value]) => `${mib(value.bytesPer1000Streams)} (${name}, ${mib(value.idleBytes)}→${mib(value.peakBytes)})`)
        .join(', ');
      const failures = Object.entries(row.failures)
        .map(([reason, count]) => `${reason}×${count}`)
        .join(', ');
      return [
        row.target,
        row.node ?? '-',
        String(row.streams),
        String(row.ok),
        `${row.failed}${failures ? ` (${failures})` : ''}`,
        String(row.stalled),
        row.peakOpen === undefined ? '-' : String(row.peakOpen),
        `${fmt(row.maxGapMs.p50, 0)}/${fmt(row.maxGapMs.p99, 0)}/${fmt(row.maxGapMs.max, 0)}`,
        fmt(row.firstByteMs.p99, 1),
        fmt(row.clientEventLoopDelayMs.max, 0),
        serverCpuCell(row),
        rss || '-',
        ledgerCell(row),
        row.passed ? 'held' : 'STALLED/FAILED',
      ];
    }),
    2,
  );
}

/**
 * The issue's goals (#13), each judged on this run's figures: `met`, `NOT MET`, or `not run` when
 * the rows it needs were not measured (knobs), with the figures behind the verdict.
 */
/** " (K open at once)" for a held level, when known. */
const openAtOnce = ({ stallFreeN, peakOpen }) => (peakOpen !== undefined && stallFreeN > 0 ? ` (${peakOpen} open at once)` : '');

function goalLines({ loadRows, bigRows, stallFree, busbarSustained = {}, busbarC1Rows = [], settings }) {
  const goals = [];
  const ourRow = (rows, connections) => rows.find((row) => row.target === 'our gateway' && row.connections === connections);
  const verdict = (ok) => (ok ? 'met' : 'NOT MET');

  const at64 = ourRow(loadRows, 64);
  const goal64 = 'non-streaming, 64 connections: req/s ≥ 2.0× Portkey and server CPU/req ≤ 0.5× Portkey (CPU counted until metering caught up)';
  if (!at64?.vsPortkey) goals.push({ goal: goal64, status: 'not run', detail: 'needs 64 in BENCH_CONNECTIONS and both gateways measured' });
  else {
    const { okPerSecond, serverCpuMsPerRequest } = at64.vsPortkey;
    goals.push({
      goal: goal64,
      status: verdict(okPerSecond !== null && okPerSecond >= 2 && serverCpuMsPerRequest !== null && serverCpuMsPerRequest <= 0.5),
      detail: `req/s ${fmt(okPerSecond)}×, CPU/req ${fmt(serverCpuMsPerRequest)}×`,
    });
  }

  const at1 = ourRow(loadRows, 1);
  const goal1 = "non-streaming, 1 connection: our added p50 ≤ Portkey's";
  if (!at1?.vsPortkey) goals.push({ goal: goal1, status: 'not run', detail: 'needs 1 in BENCH_CONNECTIONS and both gateways measured' });
  else {
    const theirs = at1.vsPortkey.portkey.addedP50Ms;
    goals.push({
      goal: goal1,
      status: verdict(at1.addedP50Ms !== null && theirs !== null && at1.addedP50Ms <= theirs),
      detail: `ours ${signed(at1.addedP50Ms)} ms, Portkey ${signed(theirs)} ms`,
    });
  }

  const goalStreams = "streams: our stall-free N ≥ 4× Portkey's";
  const ours = stallFree['our gateway'];
  const theirs = stallFree.portkey;
  if (!settings.streams.length || !ours || !theirs)
    goals.push({ goal: goalStreams, status: 'not run', detail: 'needs BENCH_STREAMS and both gateways measured' });
  else {
    let detail = `ours ${ours.stallFreeN}${openAtOnce(ours)}, Portkey ${theirs.stallFreeN}${openAtOnce(theirs)}`;
    if (theirs.heldEveryLevel)
      detail += ` (Portkey held every level tried, up to ${theirs.stallFreeN}: the bench cannot show 4× its limit; add larger levels to BENCH_STREAMS)`;
    const direct = stallFree['mock direct'];
    if (direct && !direct.heldEveryLevel)
      detail +=
        `; the load generator and mock alone (mock direct) held only up to ${direct.stallFreeN}: ` +
        'a target that stalled above that may have been held back by the bench itself';
    goals.push({ goal: goalStreams, status: verdict(ours.stallFreeN > 0 && ours.stallFreeN >= 4 * theirs.stallFreeN), detail });
  }

  const goalBusbar = "busbar streams (64 deltas 20 ms apart, a stall over 200 ms, under 0.1 % errors): our sustained N ≥ 4× Portkey's";
  const busbarOurs = busbarSustained['our gateway'];
  const busbarTheirs = busbarSustained.portkey;
  if (!settings.busbarStreams?.length || !busbarOurs || !busbarTheirs)
    goals.push({ goal: goalBusbar, status: 'not run', detail: 'needs BENCH_BUSBAR_STREAMS and both gateways measured' });
  else {
    let detail = `ours ${busbarOurs.stallFreeN}${openAtOnce(busbarOurs)}, Portkey ${busbarTheirs.stallFreeN}${openAtOnce(busbarTheirs)}`;
    if (busbarTheirs.heldEveryLevel) detail += ` (Portkey held every level tried, up to ${busbarTheirs.stallFreeN}: add larger levels to BENCH_BUSBAR_STREAMS)`;
    goals.push({ goal: goalBusbar, status: verdict(busbarOurs.stallFreeN > 0 && busbarOurs.stallFreeN >= 4 * busbarTheirs.stallFreeN), detail });
  }
  const c1Ours = busbarC1Rows.find((row) => row.target === 'our gateway');
  const c1Theirs = busbarC1Rows.find((row) => row.target === 'portkey');
  if (c1Ours && c1Theirs && c1Ours.addedFirstByteP50Ms !== null && c1Theirs.addedFirstByteP50Ms !== null) {
    goals.push({
      goal: "busbar, 1 stream at a time: our added TTFT p50 and added inter-chunk p99 ≤ Portkey's",
      status: verdict(c1Ours.addedFirstByteP50Ms <= c1Theirs.addedFirstByteP50Ms && c1Ours.addedGapP99Ms <= c1Theirs.addedGapP99Ms),
      detail:
        `TTFT ours ${signed(c1Ours.addedFirstByteP50Ms)} ms, Portkey ${signed(c1Theirs.addedFirstByteP50Ms)} ms; ` +
        `inter-chunk p99 ours ${signed(c1Ours.addedGapP99Ms)} ms, Portkey ${signed(c1Theirs.addedGapP99Ms)} ms`,
    });
  }

  const goalBig = `${Math.round(settings.bigPromptBytes / 1024)} KB prompt: our req/s ≥ Portkey's`;
  const bigOurs = bigRows.filter((row) => row.target === 'our gateway' && row.vsPortkey);
  if (!bigOurs.length) goals.push({ goal: goalBig, status: 'not run', detail: 'needs BENCH_BIG_CONNECTIONS and both gateways measured' });
  else {
    goals.push({
      goal: goalBig,
      status: verdict(bigOurs.every((row) => row.vsPortkey.okPerSecond !== null && row.vsPortkey.okPerSecond >= 1)),
      detail: bigOurs
        .map(
          (row) =>
            `c=${row.connections}: ${fmt(row.okPerSecond, 0)} vs ${fmt(row.vsPortkey.portkey.okPerSecond, 0)} req/s (${fmt(row.vsPortkey.okPerSecond)}×)`,
        )
        .join('; '),
    });
  }
  return goals;
}

function ttfbTable(rows) {
  return table(
    ['target', 'node', 'ok/n', 'TTFB p50 ms', 'TTFB p99 ms', '+p50 vs mock', 'stream end p50 ms', 'failures', 'ledger'],
    rows.map((row) => [
      row.target,
      row.node ?? '-',
      `${row.ok}/${row.attempted}`,
      fmt(row.firstByteMs.p50),
      fmt(row.firstByteMs.p99),
      signed(row.addedP50Ms),
      fmt(row.totalMs.p50),
      Object.entries(row.failures)
        .map(([reason, count]) => `${reason}×${count}`)
        .join(', ') || '0',
      ledgerCell(row),
    ]),
    2,
  );
}

function busbarC1Table(rows) {
  return table(
    ['target', 'node', 'ok/n', 'TTFT p50 ms', '+TTFT p50 vs mock', 'inter-chunk p99 ms', '+inter-chunk p99 vs mock'],
    rows.map((row) => [
      row.target,
      row.node ?? '-',
      `${row.ok}/${row.attempted}`,
      fmt(row.firstByteMs.p50),
      signed(row.addedFirstByteP50Ms),
      fmt(row.gapMs.p99),
      signed(row.addedGapP99Ms),
    ]),
    2,
  );
}

module.exports = { busbarC1Table, loadTable, keyWindowsTable, ttfbTable, streamsTable, goalLines, addRatios, fmt, signed };
