'use strict';
/**
 * The streams scenario's load: N concurrent streaming requests, opened over a short ramp, each held
 * to its end, timed at the client chunk by chunk.
 *
 * - a stream **stalls** when two consecutive body chunks arrive more than `stallMs` apart;
 * - a stream **fails** on a non-200 answer, a socket error, a timeout, or a body not ending with
 *   `data: [DONE]`;
 * - the largest gap between two chunks of each stream is kept, for its percentiles.
 *
 * One raw TCP connection per stream (no pool, no socket cap), the HTTP response read as bytes; the
 * bench process's own event-loop delay is recorded while the streams run: when the load generator
 * itself falls behind, the gaps it reports are partly its own, and the row says so.
 */
const fs = require('node:fs');
const net = require('node:net');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { summarize } = require('./load');

/** Resident set size of a process in bytes (VmRSS), or null. */
function rssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The soft limit on open files of this process, from /proc (null when unknown). */
function openFilesLimit() {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    if (!match) return null;
    return match[1] === 'unlimited' ? Infinity : Number(match[1]);
  } catch {
    return null;
  }
}

/**
 * @param {object} options
 * @param {string} options.url
 * @param {Record<string, string>} options.headers
 * @param {string} options.body
 * @param {number} options.streams N
 * @param {number} options.rampMs the streams are opened evenly over this long
 * @param {number} options.stallMs a gap above this is a stall
 * @param {number} options.timeoutMs bound on one stream, from its start
 * @param {Record<string, number>} [options.rssPids] processes whose RSS is sampled (name → pid)
 * @param {boolean} [options.recordGaps] also return every gap between two chunks (`gapValuesMs`) and every first byte (`firstByteValuesMs`)
 * @param {() => boolean} [options.shouldStop]
 */
async function holdStreams({ url, headers, body, streams, rampMs, stallMs, timeoutMs, rssPids = {}, recordGaps = false, shouldStop = () => false }) {
  const { hostname } = new URL(url);
  if (hostname !== '127.0.0.1') throw new Error(`refusing to send bench traffic to ${hostname}: only 127.0.0.1 is allowed`);
  const target = new URL(url);
  const payload = Buffer.from(body);

  const idleRss = Object.fromEntries(Object.entries(rssPids).map(([name, pid]) => [name, rssBytes(pid)]));
  const peakRss = { ...idleRss };
  let open = 0;
  let peakOpen = 0;
  let openAtPeakSample = {};
  const sampleRss = () => {
    for (const [name, pid] of Object.entries(rssPids)) {
      const value = rssBytes(pid);
      if (value !== null && (peakRss[name] === null || value > peakRss[name])) {
        peakRss[name] = value;
        openAtPeakSample[name] = open;
      }
    }
  };
  const sampler = setInterval(sampleRss, 250);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();

  const results = [];
  // Raw sockets rather than node's http client: one HTTP/1.1 request per connection
  // (`Connection: close`), the response read as bytes, its head parsed once. This costs the load
  // generator a fraction of what http.ClientRequest/IncomingMessage cost per chunk, which is what
  // decides whether it keeps up with thousands of streams.
  const head = Buffer.from(
    `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${payload.length}\r\n${Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`,
  );
  const request = Buffer.concat([head, payload]);
  const port = Number(target.port);
  const one = () =>
    new Promise((resolve) => {
      const start = performance.now();
      let first = null;
      let lastChunk = null;
      let maxGap = 0;
      let gaps = 0;
      const allGaps = [];
      let stalls = 0;
      let headText = ''; // until the end of the response head
      let status = null;
      let chunked = false;
      let contentLength = null;
      let bodyBytes = 0;
      let requestId = null;
      let last = null; // the last two reads, for the end of the body
      let beforeLast = null;
      let settled = false;
      let counted = false;
      const done = (outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (counted) open--;
        socket.destroy();
        resolve({
          ...outcome,
          requestId,
          maxGapMs: maxGap,
          allGaps,
          stalls,
          gaps,
          firstByteMs: first === null ? null : first - start,
          totalMs: performance.now() - start,
        });
      };
      const socket = net.connect({ host: target.hostname, port });
      socket.setNoDelay(true);
      socket.on('connect', () => socket.write(request));
      // The response is complete at the end of its chunked body, after content-length bytes, or
      // (neither given) when the server closes the connection.
      const complete = () => {
        if (status !== 200) return done({ ok: false, reason: `status ${status}` });
        let tail = Buffer.concat(beforeLast ? [beforeLast, last] : [last])
          .toString('latin1')
          .slice(-80);
        if (chunked) tail = tail.slice(0, -7);
        if (!tail.trimEnd().endsWith('data: [DONE]')) return done({ ok: false, reason: 'stream without [DONE]' });
        done({ ok: true });
      };
      socket.on('data', (chunk) => {
        const now = performance.now();
        beforeLast = last;
        last = chunk;
        // Body bytes this read carried: the first byte and the gaps are the stream's events', not
        // the response head's (a gateway that sends its head before the upstream answered has
        // not delivered a token by then).
        let carried = chunk.length;
        if (status === null) {
          headText += chunk.toString('latin1');
          const end = headText.indexOf('\r\n\r\n');
          if (end === -1) return;
          const lines = headText.slice(0, end).split('\r\n');
          status = Number(lines[0].split(' ')[1]);
          for (const line of lines.slice(1)) {
            const colon = line.indexOf(':');
            const name = line.slice(0, colon).trim().toLowerCase();
            const value = line.slice(colon + 1).trim();
            if (name === 'x-request-id') requestId = value;
            if (name === 'transfer-encoding' && /chunked/i.test(value)) chunked = true;
            if (name === 'content-length') contentLength = Number(value);
          }
          bodyBytes = headText.length - (end + 4);
          carried = bodyBytes;
          headText = '';
          counted = true;
          open++;
          if (open > peakOpen) peakOpen = open;
        } else {
          bodyBytes += chunk.length;
        }
        if (carried > 0) {
          if (first === null) first = now;
          else {
            const gap = now - lastChunk;
            gaps++;
            if (recordGaps) allGaps.push(gap);
            if (gap > maxGap) maxGap = gap;
            if (gap > stallMs) stalls++;
          }
          lastChunk = now;
        }
        if (chunked ? chunk.length >= 5 && chunk.toString('latin1', chunk.length - 5) === '0\r\n\r\n' : contentLength !== null && bodyBytes >= contentLength)
          complete();
      });
      socket.on('end', () => {
        if (status === null) return done({ ok: false, reason: 'connection closed before a response' });
        if (chunked || contentLength !== null) return done({ ok: false, reason: 'connection closed before the end of the body' });
        complete();
      });
      socket.on('error', (error) => done({ ok: false, reason: `socket error: ${error.code ?? error.message}` }));
      socket.on('close', () => done({ ok: false, reason: 'connection closed' }));
      const timer = setTimeout(() => done({ ok: false, reason: `timeout after ${timeoutMs} ms` }), timeoutMs);
    });

  const startedAt = performance.now();
  const pending = [];
  try {
    for (let i = 0; i < streams && !shouldStop(); i++) {
      const due = startedAt + (i * rampMs) / streams;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(one().then((result) => results.push(result)));
    }
    await Promise.all(pending);
  } finally {
    clearInterval(sampler);
    lag.disable();
  }

  const ok = results.filter((result) => result.ok);
  const failures = {};
  for (const result of results) if (!result.ok) failures[result.reason] = (failures[result.reason] ?? 0) + 1;
  const stalled = ok.filter((result) => result.stalls > 0).length;
  const rss = {};
  for (const name of Object.keys(rssPids)) {
    const grown = idleRss[name] !== null && peakRss[name] !== null ? peakRss[name] - idleRss[name] : null;
    rss[name] = {
      idleBytes: idleRss[name],
      peakBytes: peakRss[name],
      openStreamsAtPeak: openAtPeakSample[name] ?? null,
      bytesPer1000Streams: grown === null ? null : (grown / streams) * 1000,
    };
  }
  return {
    streams,
    attempted: results.length,
    ok: ok.length,
    failed: results.length - ok.length,
    stalled,
    failures,
    peakOpen,
    maxGapMs: summarize(ok.map((result) => result.maxGapMs)),
    ...(recordGaps ? { gapValuesMs: ok.flatMap((result) => result.allGaps), firstByteValuesMs: ok.map((result) => result.firstByteMs) } : {}),
    firstByteMs: summarize(ok.map((result) => result.firstByteMs)),
    totalMs: summarize(ok.map((result) => result.totalMs)),
    wallSeconds: (performance.now() - startedAt) / 1000,
    clientEventLoopDelayMs: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
    rss,
    okRequestIds: ok.map((result) => result.requestId).filter(Boolean),
    okWithoutRequestId: ok.filter((result) => !result.requestId).length,
  };
}

module.exports = { holdStreams, rssBytes, openFilesLimit };
