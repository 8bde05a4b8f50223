'use strict';
/**
 * A fast local stand-in for an OpenAI Chat Completions upstream: `POST /v1/chat/completions` answers
 * a fixed small completion with usage, or, with `stream: true`, a short SSE stream (role, three
 * content deltas, finish, usage, `[DONE]`) written at once. Keep-alive is on and kept long, so the
 * clients under test can pool their connections as they would against a real provider.
 *
 * Paced streaming (the streams scenario): a streaming request whose `model` starts with `mock-paced`
 * is answered like a real provider generating at a steady pace: the role event, then `chunks`
 * content deltas (one word each) `intervalMs` apart, finish, usage (`completion_tokens` = chunks)
 * and `[DONE]`. The pace comes from `workerData.paced` ({ chunks, intervalMs }); each chunk is due at
 * start + i × intervalMs (one shared 5 ms timer writes whatever came due), so a late tick does not
 * push the rest of the stream back. Models starting with `mock-busbar` are paced the same way at
 * the GetBusbar method's pace, BUSBAR (64 deltas 20 ms apart). `stats()`
 * counts paced streams and the worst lateness of a chunk against its due time (the mock's own
 * share of any gap a client sees).
 *
 * It runs in a worker thread of the bench process (startMockUpstream), so the load generator on the
 * main thread does not share an event loop with it. Run directly (`node bench/lib/mock-upstream.js
 * [port]`) it serves in the foreground on 127.0.0.1, for poking at by hand.
 */
const http = require('node:http');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const CONTENT = ['Hello', ' from the', ' bench mock.'];
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };
const CREATED = 1767225600;

function completionBody(model) {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: CONTENT.join('') }, logprobs: null, finish_reason: 'stop' }],
    usage: USAGE,
  });
}

function streamBody(model) {
  const chunk = (choices, extra = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model, choices, ...extra })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    ...CONTENT.map((text) => chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
    chunk([], { usage: USAGE }),
    'data: [DONE]\n\n',
  ];
}

const PACED_WORD = ' word';

function pacedChunk(model, delta, finishReason = null, extra = {}) {
  const choices = delta === null ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finishReason }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench-paced', object: 'chat.completion.chunk', created: CREATED, model, choices, ...extra })}\n\n`;
}

/** Replies are the same for every request of a model; keep the last few serialised. */
const cache = new Map();
function replies(model) {
  let entry = cache.get(model);
  if (!entry) {
    entry = { json: completionBody(model), sse: streamBody(model) };
    if (cache.size > 16) cache.clear();
    cache.set(model, entry);
  }
  return entry;
}

/** The text a paced stream of `chunks` deltas carries. */
function pacedContent(chunks) {
  return PACED_WORD.repeat(chunks);
}

/** The bytes of a paced stream, encoded once per model: its head, one content delta, its tail. */
const pacedParts = new Map();
function pacedStreamParts(model, chunks) {
  let parts = pacedParts.get(model);
  if (!parts) {
    const usage = { prompt_tokens: USAGE.prompt_tokens, completion_tokens: chunks, total_tokens: USAGE.prompt_tokens + chunks };
    const first = Buffer.from(pacedChunk(model, { role: 'assistant', content: '' }));
    const content = Buffer.from(pacedChunk(model, { content: PACED_WORD }));
    const last = Buffer.from(`${pacedChunk(model, {}, 'stop')}${pacedChunk(model, null, null, { usage })}data: [DONE]\n\n`);
    parts = { first, content, last, length: first.length + chunks * content.length + last.length };
    if (pacedParts.size > 16) pacedParts.clear();
    pacedParts.set(model, parts);
  }
  return parts;
}

/**
 * Drives every open paced stream from one timer: each stream waits in the slot (of `tickMs`) of its
 * next chunk's due time, and a tick writes the chunks of every slot that came due. Thousands of
 * streams then cost one timer callback per tick rather than one timer per chunk.
 */
function createPacer({ intervalMs, tickMs = 5, onLate }) {
  const slots = new Map(); // slot number → streams due in it
  let done = Math.floor(performance.now() / tickMs); // every slot up to this one has been run
  let timer = null;
  let open = 0;
  const place = (stream) => {
    const slot = Math.max(done + 1, Math.ceil(stream.due / tickMs));
    let list = slots.get(slot);
    if (!list) slots.set(slot, (list = []));
    list.push(stream);
  };
  const tick = () => {
    const now = performance.now();
    const upTo = Math.floor(now / tickMs);
    for (let slot = done + 1; slot <= upTo; slot++) {
      const list = slots.get(slot);
      if (!list) continue;
      slots.delete(slot);
      done = slot; // streams placed by the writes below go into later slots
      for (const stream of list) {
        if (stream.closed) continue;
        onLate(now - stream.due);
        if (stream.step()) {
          stream.due += intervalMs;
          place(stream);
        } else if (!stream.closed) {
          stream.closed = true;
          open--;
        }
      }
    }
    done = upTo;
    if (open === 0) {
      clearInterval(timer);
      timer = null;
    }
  };
  return {
    /** `step()` writes the next chunk and answers whether more are to come. */
    add(step) {
      const stream = { due: performance.now() + intervalMs, step, closed: false };
      open++;
      if (!timer) {
        done = Math.floor(performance.now() / tickMs);
        timer = setInterval(tick, tickMs);
      }
      place(stream);
      return () => {
        if (!stream.closed) {
          stream.closed = true;
          open--;
        }
      };
    },
  };
}

/** The busbar profile (the GetBusbar method): 64 deltas 20 ms apart, for models `mock-busbar…`. */
const BUSBAR = { chunks: 64, intervalMs: 20 };

function createMockServer({ paced = { chunks: 200, intervalMs: 50 }, busbar = BUSBAR } = {}) {
  const stats = { completions: 0, streams: 0, pacedStreams: 0, pacedOpen: 0, pacedMaxLateMs: 0, rejected: 0, withoutAuth: 0 };
  const onLate = (late) => {
    if (late > stats.pacedMaxLateMs) stats.pacedMaxLateMs = late;
  };
  const profiles = {
    paced: { ...paced, pacer: createPacer({ intervalMs: paced.intervalMs, onLate }) },
    busbar: { ...busbar, pacer: createPacer({ intervalMs: busbar.intervalMs, onLate }) },
  };
  const pacedStream = (res, model, { chunks, pacer }) => {
    stats.pacedStreams++;
    stats.pacedOpen++;
    const parts = pacedStreamParts(model, chunks);
    // The length is known in advance, so the body goes without chunked framing: less work per write
    // for the mock, and nothing a streaming client reads differently.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'content-length': parts.length });
    res.write(parts.first);
    let sent = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      stats.pacedOpen--;
      cancel();
    };
    const cancel = pacer.add(() => {
      if (finished) return false;
      sent++;
      if (sent < chunks) {
        res.write(parts.content);
        return true;
      }
      res.write(parts.content);
      res.end(parts.last);
      finish();
      return false;
    });
    res.once('close', finish);
  };
  const server = http.createServer((req, res) => {
    const url = req.url.split('?')[0];
    if (req.method !== 'POST' || url !== '/v1/chat/completions') {
      stats.rejected++;
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `mock: no route ${req.method} ${url}`, type: 'invalid_request_error' } }));
      return;
    }
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) stats.withoutAuth++;
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        stats.rejected++;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'mock: body is not JSON', type: 'invalid_request_error' } }));
        return;
      }
      const model = typeof body.model === 'string' ? body.model : 'mock';
      if (body.stream === true && (model.startsWith('mock-paced') || model.startsWith('mock-busbar'))) {
        pacedStream(res, model, model.startsWith('mock-busbar') ? profiles.busbar : profiles.paced);
        return;
      }
      const reply = replies(model);
      if (body.stream === true) {
        stats.streams++;
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        for (const event of reply.sse) res.write(event);
        res.end();
        return;
      }
      stats.completions++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.json) });
      res.end(reply.json);
    });
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  return { server, stats };
}

/**
 * Starts the mock in a worker thread on 127.0.0.1 and a free port. Resolves with its URL, a stats()
 * reader and stop(). `paced`: { chunks, intervalMs } of the paced streams.
 */
function startMockUpstream({ paced } = {}) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(__dirname, 'mock-upstream.js'), { workerData: { role: 'mock-upstream', paced } });
    const pending = new Map();
    let nextId = 1;
    let ready = false;
    const ask = (type) =>
      new Promise((done, fail) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          fail(new Error(`mock upstream did not answer ${type}`));
        }, 5000);
        pending.set(id, (value) => {
          clearTimeout(timer);
          done(value);
        });
        worker.postMessage({ type, id });
      });
    worker.on('message', (message) => {
      if (message.type === 'listening') {
        ready = true;
        resolve({
          port: message.port,
          url: `http://127.0.0.1:${message.port}`,
          stats: () => ask('stats'),
          eventLoopUtilization: () => ask('elu'),
          /** Zeroes the worst paced-chunk lateness, so stats() reports it for what follows. */
          resetPacedLateness: () => ask('paced-reset'),
          stop: async () => {
            try {
              await ask('stop');
            } catch {
              // terminate below anyway
            }
            await worker.terminate();
          },
        });
        return;
      }
      const answer = pending.get(message.id);
      if (answer) {
        pending.delete(message.id);
        answer(message.value);
      }
    });
    worker.once('error', (error) => {
      if (!ready) reject(error);
      else process.stderr.write(`mock upstream worker failed: ${error.stack ?? error}\n`);
    });
  });
}

if (!isMainThread && workerData?.role === 'mock-upstream') {
  const { server, stats } = createMockServer(workerData.paced ? { paced: workerData.paced } : undefined);
  let eluMark = performance.eventLoopUtilization();
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
  parentPort.on('message', (message) => {
    if (message.type === 'stats') parentPort.postMessage({ id: message.id, value: { ...stats } });
    if (message.type === 'paced-reset') {
      stats.pacedMaxLateMs = 0;
      parentPort.postMessage({ id: message.id, value: true });
    }
    if (message.type === 'elu') {
      // Share of the mock thread's time spent busy since the previous call.
      const now = performance.eventLoopUtilization();
      parentPort.postMessage({ id: message.id, value: performance.eventLoopUtilization(now, eluMark).utilization });
      eluMark = now;
    }
    if (message.type === 'stop') {
      server.close(() => parentPort.postMessage({ id: message.id, value: true }));
      server.closeAllConnections();
    }
  });
} else if (require.main === module) {
  const { server } = createMockServer();
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => console.log(`mock upstream on http://127.0.0.1:${server.address().port}`));
}

module.exports = { startMockUpstream, createMockServer, pacedContent, CONTENT, BUSBAR };
