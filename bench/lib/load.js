'use strict';
/**
 * The two measurements, both bounded in count and time and aimed at 127.0.0.1 only:
 * - `closedLoop`: autocannon, N connections each sending the next request as soon as the previous
 *   answer arrived (a closed loop), for a fixed duration;
 * - `ttfb`: sequential streaming requests with node's http client, timing request start → first
 *   body chunk, and → end of the stream (and collecting each ok stream's `x-request-id`).
 */
const http = require('node:http');
const autocannon = require('autocannon');

function assertLoopback(url) {
  const { hostname } = new URL(url);
  if (hostname !== '127.0.0.1') throw new Error(`refusing to send bench traffic to ${hostname}: only 127.0.0.1 is allowed`);
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : null,
    min: sorted.length ? sorted[0] : null,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : null,
  };
}

let current = null;
/** Stops the autocannon run in progress, if any (Ctrl-C). */
function stopCurrent() {
  if (current) current.stop();
}

/** The value of a header in autocannon's `onResponse` headers (names as the server sent them). */
function headerValue(headers, name) {
  for (const key of Object.keys(headers ?? {})) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

/**
 * One autocannon run. Latencies of 2xx answers are also collected at full (sub-millisecond)
 * resolution from its `response` events, since its own histogram has 1 ms buckets.
 *
 * `body` is a string sent with every request, or a function returning the next request's body (a
 * fresh one per request: the 16 KB prompt scenario). Every 2xx answer's `x-request-id` header is
 * collected (autocannon's `onResponse` hook), so the ledger can be checked request by request.
 * @returns the autocannon result plus `exact` latency percentiles (ms), `requestIds` (the
 *   `x-request-id` of every 2xx answer, in order) and `okWithoutRequestId` (2xx answers without one)
 */
function closedLoop({ url, headers, body, connections, durationSeconds, timeoutSeconds = 10 }) {
  assertLoopback(url);
  return new Promise((resolve, reject) => {
    const latencies = [];
    const requestIds = [];
    let okWithoutRequestId = 0;
    const request = {
      method: 'POST',
      path: new URL(url).pathname,
      onResponse: (status, _body, _context, responseHeaders) => {
        if (status < 200 || status >= 300) return;
        const id = headerValue(responseHeaders, 'x-request-id');
        if (typeof id === 'string' && id) requestIds.push(id);
        else okWithoutRequestId++;
      },
    };
    if (typeof body === 'function') request.setupRequest = (req) => ({ ...req, body: body() });
    else request.body = body;
    const instance = autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        ...(typeof body === 'function' ? {} : { body }),
        requests: [request],
        connections,
        pipelining: 1,
        duration: durationSeconds,
        timeout: timeoutSeconds,
      },
      (error, result) => {
        clearTimeout(guard);
        current = null;
        if (error) reject(error);
        else resolve({ ...result, exact: summarize(latencies), requestIds, okWithoutRequestId });
      },
    );
    current = instance;
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
    // Belt and braces: autocannon stops by itself after `duration`; this stops it if it did not.
    const guard = setTimeout(() => instance.stop(), (durationSeconds + timeoutSeconds + 15) * 1000);
  });
}

/**
 * Sequential streaming requests over one keep-alive connection. A request counts as ok when the
 * status is 200 and the body ends with `data: [DONE]`.
 */
async function ttfb({ url, headers, body, count, warmup = 10, timeoutMs = 10_000, deadlineMs = 180_000, shouldStop = () => false }) {
  assertLoopback(url);
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = Buffer.from(body);
  const firstByte = [];
  const total = [];
  const failures = {};
  const fail = (reason) => {
    failures[reason] = (failures[reason] ?? 0) + 1;
  };
  const one = () =>
    new Promise((resolve) => {
      const start = process.hrtime.bigint();
      let first = null;
      let settled = false;
      const done = (outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
        },
        (response) => {
          let tail = '';
          response.on('data', (chunk) => {
            if (first === null) first = process.hrtime.bigint();
            tail = (tail + chunk.toString('utf8')).slice(-64);
          });
          response.on('end', () => {
            const end = process.hrtime.bigint();
            if (response.statusCode !== 200) return done({ ok: false, reason: `status ${response.statusCode}` });
            if (!tail.trimEnd().endsWith('data: [DONE]')) return done({ ok: false, reason: 'stream without [DONE]' });
            done({ ok: true, firstMs: Number(first - start) / 1e6, totalMs: Number(end - start) / 1e6, requestId: response.headers['x-request-id'] ?? null });
          });
          response.on('error', (error) => done({ ok: false, reason: `response error: ${error.code ?? error.message}` }));
        },
      );
      const timer = setTimeout(() => {
        request.destroy(new Error('timeout'));
        done({ ok: false, reason: `timeout after ${timeoutMs} ms` });
      }, timeoutMs);
      request.on('error', (error) => done({ ok: false, reason: `request error: ${error.code ?? error.message}` }));
      request.end(payload);
    });

  const deadline = Date.now() + deadlineMs;
  let attempted = 0;
  let warmupAttempted = 0;
  const okRequestIds = [];
  try {
    for (let i = 0; i < warmup && Date.now() < deadline && !shouldStop(); i++) {
      warmupAttempted++;
      await one();
    }
    for (let i = 0; i < count && Date.now() < deadline && !shouldStop(); i++) {
      attempted++;
      const outcome = await one();
      if (outcome.ok) {
        firstByte.push(outcome.firstMs);
        total.push(outcome.totalMs);
        if (outcome.requestId) okRequestIds.push(outcome.requestId);
      } else {
        fail(outcome.reason);
      }
    }
  } finally {
    agent.destroy();
  }
  return {
    requested: count,
    attempted,
    warmupAttempted,
    ok: firstByte.length,
    failures,
    firstByteMs: summarize(firstByte),
    totalMs: summarize(total),
    okRequestIds,
  };
}

/** One request (a POST of a JSON body, or `method` without one), for checking a target or calling its API outside the measured runs. */
function probe({ url, headers, body, method = 'POST', timeoutMs = 10_000 }) {
  assertLoopback(url);
  const target = new URL(url);
  const payload = Buffer.from(body ?? '');
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method,
        agent: false,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': payload.length }), ...headers },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', (error) => resolve({ status: 0, body: String(error) }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => resolve({ status: 0, body: String(error.message) }));
    request.end(payload);
  });
}

module.exports = { closedLoop, ttfb, probe, stopCurrent, summarize, percentile };
