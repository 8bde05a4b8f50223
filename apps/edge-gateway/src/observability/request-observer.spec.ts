import { ModelCatalog } from '@gateway/catalog';
import { Principal } from '@gateway/contracts';
import { createJsonLogger, GatewayMetrics, GracefulShutdown, JsonLoggerService } from '@gateway/platform';
import Fastify, { FastifyInstance } from 'fastify';
import { RequestObserver } from './request-observer';

const MASTER_KEY = 'ek-0123456789abcdefghijklmnopqrstuvwxyzWXYZ';
const ACCOUNT_ID = 'acct_7f3a9c1e55d2';

const catalog = ModelCatalog.fromYaml(
  `models:
  - id: sim-chat
    pricing: { input: 1, output: 2 }
    endpoints: [chat.completions]
    routes:
      - { adapter: simulator, upstream_model: sim-chat }`,
  {},
  () => undefined,
);

const principal: Principal = {
  keyId: 'key_1',
  keyType: 'master',
  accountId: ACCOUNT_ID,
  plan: 'pro',
  maskedKey: `ek-...${MASTER_KEY.slice(-4)}`,
  proxy: null,
};

/** A small edge: the observer's hooks, a stand-in for authentication, and routes of the real shapes. */
function setup() {
  const lines: Record<string, unknown>[] = [];
  const logger = new JsonLoggerService(createJsonLogger('edge-gateway', 'log', { write: (line: string) => void lines.push(JSON.parse(line)) }));
  const metrics = new GatewayMetrics();
  const shutdown = new GracefulShutdown();
  const observer = new RequestObserver(metrics, logger, shutdown, catalog);
  // Request ids the assertions can name (the edge itself generates them).
  const fastify: FastifyInstance = Fastify({ genReqId: (request) => String(request.headers['x-request-id'] ?? 'generated') });
  observer.register(fastify);
  fastify.addHook('preHandler', async (request) => {
    if (request.headers.authorization === `Bearer ${MASTER_KEY}`) Object.assign(request, { principal });
  });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The family as `@EndpointFamily` puts it in the route's config.
  fastify.post('/v1/chat/completions', { config: { family: 'text' } }, async (request, reply) => {
    const model = (request.body as { model: string }).model;
    if (!('principal' in request)) return reply.status(401).send({ error: 'no key' });
    if (model === 'slow-sim-chat') await gate;
    return reply.status(catalog.get(model) || model === 'slow-sim-chat' ? 200 : 404).send({ ok: true });
  });
  fastify.get('/v1/auth/proxy/:proxy_key', async (_request, reply) => reply.status(401).send({ detail: 'Invalid API key' }));
  fastify.get('/readyz', async () => ({ ready: true }));
  return { fastify, metrics, shutdown, lines, release };
}

const chat = (fastify: FastifyInstance, model: string, key = MASTER_KEY) =>
  fastify.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model, messages: [] } });

describe('RequestObserver', () => {
  it("counts requests by route pattern, catalog model, status, key type and the route's family, with no caller data in any label", async () => {
    const { fastify, metrics } = setup();
    expect((await chat(fastify, 'sim-chat')).statusCode).toBe(200);
    expect((await chat(fastify, `sim-chat and my account ${ACCOUNT_ID}`)).statusCode).toBe(404);
    expect((await fastify.inject({ method: 'GET', url: `/v1/auth/proxy/ek-proxy-${'s'.repeat(40)}` })).statusCode).toBe(401);
    const text = await metrics.render();
    expect(text).toContain('gateway_http_requests_total{route="/v1/chat/completions",model="sim-chat",status="200",key_type="master",family="text"} 1');
    expect(text).toContain('gateway_http_requests_total{route="/v1/chat/completions",model="unknown",status="404",key_type="master",family="text"} 1');
    expect(text).toContain('gateway_http_requests_total{route="/v1/auth/proxy/:proxy_key",model="none",status="401",key_type="none",family="none"} 1');
    expect(text).toContain(
      'gateway_http_request_duration_seconds_count{route="/v1/chat/completions",model="sim-chat",status="200",key_type="master",family="text"} 1',
    );
    expect(text).toContain('gateway_inflight_requests{family="text"} 0');
    expect(text).toContain('gateway_inflight_requests{family="none"} 0');
    for (const secret of [ACCOUNT_ID, MASTER_KEY.slice(-4), 'ek-proxy-', 'my account']) expect(text).not.toContain(secret);
  });

  it('logs one JSON line per request with the masked key, never the key itself', async () => {
    const { fastify, lines } = setup();
    await chat(fastify, 'sim-chat');
    const unknownKey = `ek-${'z'.repeat(40)}`;
    await chat(fastify, 'sim-chat', unknownKey);
    const requests = lines.filter((line) => line.msg === 'request completed');
    expect(requests).toEqual([
      expect.objectContaining({
        level: 'info',
        service: 'edge-gateway',
        context: 'http',
        request_id: expect.any(String),
        method: 'POST',
        route: '/v1/chat/completions',
        model: 'sim-chat',
        status: 200,
        latency_ms: expect.any(Number),
        key_type: 'master',
        key: `ek-...${MASTER_KEY.slice(-4)}`,
      }),
      expect.objectContaining({ status: 401, key_type: 'none', key: 'ek-...zzzz' }),
    ]);
    const output = JSON.stringify(lines);
    expect(output).not.toContain(MASTER_KEY);
    expect(output).not.toContain(unknownKey);
  });

  it('while draining: refuses new requests with a 503 carrying the request id, answers probes, and waits for open requests', async () => {
    const { fastify, shutdown, release, metrics } = setup();
    const open = chat(fastify, 'slow-sim-chat');
    for (let i = 0; i < 50 && shutdown.inFlight === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(shutdown.inFlight).toBe(1);
    expect(await metrics.render()).toContain('gateway_inflight_requests{family="text"} 1');
    let drained: boolean | undefined;
    const drain = shutdown.drain(60_000).then((done) => (drained = done));

    const refused = await fastify.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'x-request-id': 'r-1' }, payload: {} });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.json()).toEqual({
      error: { message: expect.stringMatching(/shutting down/), type: 'service_unavailable_error', code: 'service_unavailable', param: null },
      request_id: 'r-1',
    });
    expect((await fastify.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect(drained).toBeUndefined();

    release();
    expect((await open).statusCode).toBe(200);
    await drain;
    expect(drained).toBe(true);
  });
});
