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

function loadTable(rows) {
  return table(
    ['target', 'conc', 'req/s', 'p50 ms', 'p99 ms', '+p50 vs mock', 'errors/non-2xx', 'server CPU ms/req'],
    rows.map((row) => {
      const codes = statusSummary(row.statusCodeStats);
      return [
        row.target,
        String(row.connections),
        fmt(row.okPerSecond, 0),
        fmt(row.latencyMs.p50),
        fmt(row.latencyMs.p99),
        signed(row.addedP50Ms),
        `${row.errors} / ${row.non2xx}${codes ? ` (${codes})` : ''}`,
        fmt(row.serverCpuMsPerRequest, 3),
      ];
    }),
    1,
  );
}

function ttfbTable(rows) {
  return table(
    ['target', 'ok/n', 'TTFB p50 ms', 'TTFB p99 ms', '+p50 vs mock', 'stream end p50 ms', 'failures'],
    rows.map((row) => [
      row.target,
      `${row.ok}/${row.attempted}`,
      fmt(row.firstByteMs.p50),
      fmt(row.firstByteMs.p99),
      signed(row.addedP50Ms),
      fmt(row.totalMs.p50),
      Object.entries(row.failures)
        .map(([reason, count]) => `${reason}×${count}`)
        .join(', ') || '0',
    ]),
    1,
  );
}

module.exports = { loadTable, ttfbTable, fmt, signed };
