import { ModelCatalog } from '@gateway/catalog';
import { maskKey } from '@gateway/contracts';
import { Injectable } from '@nestjs/common';
import { GatewayMetrics, GracefulShutdown, JsonLoggerService, Metrics, modelLabel, SpanStatusCode } from '@gateway/platform';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger as Pino } from 'pino';
import type { Counter, Gauge, Histogram } from 'prom-client';
import { bearerKey } from '../auth/api-key.guard';
import type { AuthenticatedRequest } from '../auth/auth.decorators';
import { errorBody } from '../errors/error-formats';
import { errorFormatOf } from '../policy/error-format.decorator';
import { clientRequestId } from '../http/client-request-id';
import { familyOf } from '../policy/endpoint-family.decorator';
import { requestTrace } from './traced-http-server';
import { ErrorCode } from '@gateway/errors';

/** Probes and scrapes: neither measured, logged at info, nor refused while draining. */
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);
const REASONING_EXCLUDE = ':reasoning-exclude';

/** A response that never finished: the client went away first (nginx's convention). */
const CLIENT_CLOSED = 499;

type RequestLabels = 'route' | 'model' | 'status' | 'key_type' | 'family';

interface Series {
  requests: Counter.Internal;
  duration: Histogram.Internal<RequestLabels>;
}

/** What one finished request looks like in the metrics and the log line. */
export interface RequestSummary {
  requestId: string;
  /** The client's own id for the request, when it sent a well-formed one. */
  clientRequestId?: string;
  traceId?: string;
  method: string;
  /** The route pattern (`/v1/auth/proxy/:key`), never the URL. */
  route: string;
  /** The route's endpoint family (`none` for a route of none). */
  family: string;
  model: string;
  status: number;
  latencyMs: number;
  keyType: string;
  /** Prefix and last 4 characters, never more. */
  maskedKey?: string;
}

/**
 * Per request at the edge: in-flight count (which the shutdown drain waits for), the request
 * counter and latency histogram, one structured log line on completion, and the server span's
 * name and status. While draining, new requests are refused with 503 and `Connection: close`.
 */
@Injectable()
export class RequestObserver {
  private readonly log: Pino;
  private readonly requests: Counter<RequestLabels>;
  private readonly duration: Histogram<RequestLabels>;
  private readonly inflight: Gauge<'family'>;
  private readonly ttfb: Histogram<'route' | 'model'>;
  private readonly series = new Map<string, Series>();

  constructor(
    metrics: GatewayMetrics,
    logger: JsonLoggerService,
    private readonly shutdown: GracefulShutdown,
    private readonly catalog: ModelCatalog,
  ) {
    this.log = logger.pino.child({ context: 'http' });
    this.requests = metrics.counter(Metrics.httpRequests);
    this.duration = metrics.histogram(Metrics.httpRequestDuration);
    this.inflight = metrics.gauge(Metrics.inflightRequests);
    this.ttfb = metrics.histogram(Metrics.streamTtfb);
  }

  register(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', async (request, reply) => {
      if (PROBE_ROUTES.has(request.routeOptions.url ?? '')) return;
      const endWork = this.shutdown.beginWork();
      const inflight = this.inflight.labels({ family: familyOf(request) });
      inflight.inc();
      let finished = false;
      reply.raw.once('finish', () => (finished = true));
      reply.raw.once('close', () => {
        endWork();
        inflight.dec();
        const summary = this.summarize(request, reply, finished);
        nameSpan(request, summary);
        this.complete(summary);
      });
      if (this.shutdown.draining) return this.refuse(request, reply);
    });
  }

  /** Time to first streamed event, from the request's arrival. */
  streamStarted(request: FastifyRequest): void {
    const arrived = requestTrace(request.raw)?.startedAt;
    if (arrived === undefined) return;
    this.ttfb.observe({ route: routeOf(request), model: this.modelOf(request) }, (performance.now() - arrived) / 1000);
  }

  /** The catalog id a request's body names, `unknown` for any other text, `none` without a model. */
  modelOf(request: FastifyRequest): string {
    const body = request.body as { model?: unknown } | undefined;
    let model = body && typeof body === 'object' ? body.model : undefined;
    if (typeof model === 'string' && model.endsWith(REASONING_EXCLUDE)) model = model.slice(0, -REASONING_EXCLUDE.length);
    return modelLabel(model, (id) => this.catalog.get(id) !== undefined);
  }

  /** `finished`: the whole response was written (otherwise the client left first). */
  summarize(request: FastifyRequest, reply: FastifyReply, finished: boolean): RequestSummary {
    const principal = (request as Partial<AuthenticatedRequest>).principal;
    const presented = principal ? undefined : bearerKey(request, true);
    const trace = requestTrace(request.raw);
    return {
      requestId: String(request.id),
      clientRequestId: clientRequestId(request),
      traceId: trace?.span.spanContext().traceId,
      method: request.method,
      route: routeOf(request),
      family: familyOf(request),
      model: this.modelOf(request),
      status: finished ? reply.raw.statusCode : CLIENT_CLOSED,
      latencyMs: trace ? performance.now() - trace.startedAt : reply.elapsedTime,
      keyType: principal?.keyType ?? 'none',
      maskedKey: principal?.maskedKey ?? (presented ? maskKey(presented) : undefined),
    };
  }

  complete(summary: RequestSummary): void {
    const series = this.seriesOf(summary);
    series.requests.inc();
    series.duration.observe(summary.latencyMs / 1000);
    const failed = summary.status >= 500 && summary.status !== CLIENT_CLOSED;
    if (!this.log.isLevelEnabled(failed ? 'error' : 'info')) return;
    const line = {
      request_id: summary.requestId,
      client_request_id: summary.clientRequestId,
      trace_id: summary.traceId,
      method: summary.method,
      route: summary.route,
      model: summary.model,
      status: summary.status,
      latency_ms: Math.round(summary.latencyMs * 10) / 10,
      key_type: summary.keyType,
      key: summary.maskedKey,
    };
    if (failed) this.log.error(line, 'request completed');
    else this.log.info(line, 'request completed');
  }

  /**
   * The request's counter and histogram children, looked up once per label set: prom-client
   * validates and hashes the labels on every `inc(labels)`. The label values are bounded (route
   * patterns, catalog models, statuses, key types), so is this map.
   */
  private seriesOf(summary: RequestSummary): Series {
    const key = `${summary.route}\n${summary.model}\n${summary.status}\n${summary.keyType}`;
    let series = this.series.get(key);
    if (!series) {
      // The family follows from the route: not part of the key.
      const labels = { route: summary.route, model: summary.model, status: String(summary.status), key_type: summary.keyType, family: summary.family };
      series = { requests: this.requests.labels(labels), duration: this.duration.labels(labels) };
      this.series.set(key, series);
    }
    return series;
  }

  private refuse(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const problem = { status: 503, message: 'This gateway replica is shutting down; retry the request', code: ErrorCode.ServiceUnavailable };
    return reply
      .status(503)
      .headers({ connection: 'close', 'retry-after': '1' })
      .send(errorBody(errorFormatOf(request), problem, String(request.id)));
  }
}

/** The span is named and marked once the route and status are known; the server factory ends it. */
function nameSpan(request: FastifyRequest, summary: RequestSummary): void {
  const span = requestTrace(request.raw)?.span;
  if (!span) return;
  span.updateName(`${summary.method} ${summary.route}`);
  span.setAttributes({ 'http.route': summary.route, 'http.response.status_code': summary.status, 'gateway.request_id': summary.requestId });
  if (summary.status >= 500 && summary.status !== CLIENT_CLOSED) span.setStatus({ code: SpanStatusCode.ERROR });
}

const routeOf = (request: FastifyRequest): string => request.routeOptions.url ?? 'unmatched';
