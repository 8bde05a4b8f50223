'use strict';
/**
 * The bare gateways of `npm run bench:floor` (bench/floor.js), one per process, started with
 * `fork(__filename, [role])`: the least any Node.js gateway of that shape can do per request, with
 * the libraries ours uses and nothing else (no authentication, validation, routing, metering, logs).
 *
 * - `proxy`: one process: node:http server → undici POST to the mock → the answer, re-serialised
 *   (the request's and the answer's JSON parsed and rendered once each, as a translating gateway must).
 * - `router`: a NATS subscriber on `floor.inference` that makes that upstream call and replies.
 * - `edge`: a node:http server that sends each request to the router over NATS (request/reply) and
 *   answers with the reply; with `FLOOR_REDIS` set, it first runs one Redis script per request (a
 *   per-minute counter, the shape of an admission check) and waits for its answer.
 *
 * Each sends its HTTP port (0 for the router) to the parent once it is ready.
 */
const http = require('node:http');
const { Agent, request } = require('undici');

const role = process.argv[2];
const upstreamUrl = `${process.env.FLOOR_MOCK}/v1/chat/completions`;
const upstreamAgent = new Agent({ connections: 4096 });
const SUBJECT = 'floor.inference';

async function upstream(body) {
  const response = await request(upstreamUrl, {
    method: 'POST',
    dispatcher: upstreamAgent,
    headers: { 'content-type': 'application/json', authorization: 'Bearer floor' },
    body: JSON.stringify({ ...body, model: 'mock' }),
  });
  const answer = JSON.parse(await response.body.text());
  answer.model = body.model;
  return answer;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
    req.on('error', reject);
  });
}

let served = 0;
/** An HTTP server answering each JSON POST with what `answer` makes of its body. */
function serve(answer) {
  const server = http.createServer((req, res) => {
    readJson(req)
      .then(answer)
      .then((body) => res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `floor-${process.pid}-${++served}` }).end(body))
      .catch((error) => res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: error.message } })));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
}

async function main() {
  if (role === 'proxy') return serve(async (body) => JSON.stringify(await upstream(body)));
  const { connect } = require('nats');
  const nats = await connect({ servers: process.env.FLOOR_NATS, name: `floor-${role}` });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  if (role === 'router') {
    nats.subscribe(SUBJECT, {
      callback: (error, message) => {
        if (error) return;
        upstream(JSON.parse(decoder.decode(message.data)))
          .then((answer) => message.respond(encoder.encode(JSON.stringify(answer))))
          .catch((failure) => message.respond(encoder.encode(JSON.stringify({ error: { message: failure.message } }))));
      },
    });
    await nats.flush();
    process.send(0);
    return;
  }
  let admit = async () => undefined;
  if (process.env.FLOOR_REDIS) {
    const Redis = require('ioredis');
    const redis = new Redis(process.env.FLOOR_REDIS);
    redis.defineCommand('floorAdmit', {
      numberOfKeys: 1,
      lua: "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], 120) end return n",
    });
    admit = () => redis.floorAdmit(`floor:admit:${Math.floor(Date.now() / 60_000)}`);
  }
  serve(async (body) => {
    await admit();
    const reply = await nats.request(SUBJECT, encoder.encode(JSON.stringify(body)), { timeout: 10_000 });
    return JSON.stringify(JSON.parse(decoder.decode(reply.data)));
  });
}

main().catch((error) => {
  console.error(`floor ${role}: ${error.stack ?? error}`);
  process.exit(1);
});
