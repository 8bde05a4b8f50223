import { registerMultipartBodyParser } from '../uploads/multipart-body.parser';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { splitList, UNAVAILABLE_RETRY_AFTER_SECONDS } from '@gateway/platform';
import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { EdgeEnv } from '../config/edge.env';
import { mountOpenApi } from '../openapi/openapi.setup';
import { RegisteredRoute, recordRoutes } from '../openapi/route-registry';
import type { HeldReservation } from '../billing/budget.service';
import { clientRequestId } from './client-request-id';
import { registerJsonBodyParser } from './json-body.parser';
import { inspectJson, unstorableTextMessage } from './json-inspection';
import { rewriteLegacyUrl } from './legacy-urls';
import { ServerTimeouts, tracedServerFactory } from '../observability/traced-http-server';
import { registerConsole } from '../console/console-static';
import { errorBody } from '../errors/error-formats';
import { DomainError, ErrorCode } from '@gateway/errors';

/** How often Node enforces the request and header timeouts (its default, 30 s, would add as much to them). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

export interface EdgeHttp {
  adapter: FastifyAdapter;
  /** Every route Fastify registers from here on, Nest's and the documentation's alike. */
  routes: RegisteredRoute[];
}

/** The edge's Fastify instance with its hooks and body parser, before Nest adds any route. */
export function createEdgeHttp(env: EdgeEnv): EdgeHttp {
  const trustedProxies = splitList(env.TRUSTED_PROXIES);
  const adapter = new FastifyAdapter({
    // request.ip is the socket address unless the hop is a listed proxy.
    trustProxy: trustedProxies.length > 0 ? trustedProxies : false,
    bodyLimit: env.BODY_LIMIT_BYTES,
    rewriteUrl: rewriteLegacyUrl,
    // Legacy paths carry a proxy key (up to 256 characters) as a parameter; longer ones are a 400, not a 414.
    routerOptions: { maxParamLength: 1024 },
    genReqId: () => `req_${randomUUID().replace(/-/g, '')}`,
    // Slow or stalled clients (slowloris, a body that stops short of its length, an unfinished
    // chunked body) get 408 and lose the connection once the bound (plus one check interval) passes.
    requestTimeout: env.BODY_TIMEOUT_MS,
    serverFactory: (handler: RequestListener, options: unknown) =>
      tracedServerFactory(handler, {
        ...(options as ServerTimeouts),
        headersTimeout: Math.min(env.HEADERS_TIMEOUT_MS, env.BODY_TIMEOUT_MS),
        connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      }),
    // Requests that arrive while draining get our 503 (with the request id), not Fastify's bare one.
    return503OnClosing: false,
    // A URL Fastify cannot decode (`%ZZ`) is refused before any route or hook: in our error shape too.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      void reply
        .code(400)
        .header('x-request-id', request.id)
        .send(
          errorBody('openai', { status: 400, message: `The request URL is not valid: ${error.message}`, code: ErrorCode.InvalidRequest }, String(request.id)),
        );
    },
  });
  const fastify = adapter.getInstance();
  const routes = recordRoutes(fastify);
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const clientId = clientRequestId(request);
    if (clientId) reply.header('x-client-request-id', clientId);
  });
  fastify.addHook('onSend', async (request, reply) => {
    // Every 503 is an outage or a drain, whichever code path wrote it: tell the client when to retry.
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after')) void reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    // A reservation no relay claimed (validation failed after the guard, the handler refused the
    // request) is released before the answer leaves, so an immediate retry finds the credits free.
    await (request as { reservation?: HeldReservation }).reservation?.drop();
  });
  registerJsonBodyParser(fastify, env.BODY_LIMIT_BYTES, env.JSON_MAX_DEPTH);
  registerMultipartBodyParser(fastify);
  fastify.addHook('preValidation', async (request) => refuseUnstorableUrlText(request));
  // Some clients probe the base URL before use; no key is needed and nothing is under /v1 here. HEAD is Fastify's own.
  fastify.get('/', async () => ({ status: 'ok', service: 'edge-gateway' }));
  // The web console's files (outside /v1, no key: the app signs in through /console/api/session).
  registerConsole(fastify, env.CONSOLE_DIR);
  return { adapter, routes };
}

/**
 * A path parameter or query value PostgreSQL could not store (`%00` decodes to a NUL) would fail
 * the lookup it is for with a 500: it is a 400 naming the parameter. Only a percent-encoded URL can
 * hold one, so other requests skip the check.
 */
function refuseUnstorableUrlText(request: FastifyRequest): void {
  if (!request.url.includes('%')) return;
  for (const [where, values] of [
    ['path', request.params],
    ['query', request.query],
  ] as const) {
    const problem = inspectJson(values, { prototypeKeys: false, text: true });
    if (problem) throw new DomainError(ErrorCode.InvalidRequest, unstorableTextMessage(problem.param, where), problem.param || undefined);
  }
}

/** Paths served outside the `/v1` prefix: probes, the Prometheus scrape, the console's sign-in. */
const UNPREFIXED = ['healthz', 'readyz', 'metrics', 'console/api/session'];

/** What every edge app gets once Nest has created it: the `/v1` prefix and the API reference it serves. */
export function configureEdgeApp(app: NestFastifyApplication): OpenAPIObject {
  app.setGlobalPrefix('v1', { exclude: UNPREFIXED });
  return mountOpenApi(app);
}
