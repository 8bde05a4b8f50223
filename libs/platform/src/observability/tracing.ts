import {
  Attributes,
  Context,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  TextMapGetter,
  TextMapSetter,
  trace,
  Tracer,
} from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { headers as natsHeaders, MsgHdrs } from 'nats';

export { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

const TRACER_NAME = 'model-gateway';

export const gatewayTracer = (): Tracer => trace.getTracer(TRACER_NAME);

export interface TracingHandle {
  /** True when spans are exported (an OTLP endpoint is configured). */
  exporting: boolean;
  /** Flushes the spans still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra processors, e.g. an in-memory exporter in tests. */
  spanProcessors?: SpanProcessor[];
}

let started: TracingHandle | undefined;

/**
 * Registers the process's tracer provider with the W3C trace-context propagator. Spans always
 * exist, so trace ids reach the logs and cross NATS and BullMQ; they are exported over OTLP/HTTP
 * (JSON) only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
 * With nothing to export them to, spans are not recorded: each still gets its ids (continuing an
 * incoming `traceparent`) and is propagated, but carries no attributes, events or timings, which
 * would cost every request and NATS message for nothing. `OTEL_SERVICE_NAME` overrides the service
 * name. Idempotent.
 */
export async function startTracing(service: string, options: TracingOptions = {}): Promise<TracingHandle> {
  if (started) return started;
  const env = options.env ?? process.env;
  // Loaded here rather than at the top: the admin CLI and unit tests never pay for the SDK.
  const [{ NodeTracerProvider, BatchSpanProcessor, AlwaysOffSampler }, { W3CTraceContextPropagator }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const processors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (exporting) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || service }),
    spanProcessors: processors,
    // Unset, the SDK's default (OTEL_TRACES_SAMPLER, else parent-based always-on) decides.
    sampler: processors.length === 0 ? new AlwaysOffSampler() : undefined,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  started = { exporting, shutdown: () => provider.shutdown().catch(() => undefined) };
  return started;
}

/** The trace and span ids of the active span, for log lines; empty outside any trace. */
export function activeTraceIds(ctx: Context = context.active()): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/** Marks a span failed, with the error as its exception event. */
export function recordSpanError(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : new Error(String(error)));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * The active trace context as a plain carrier (`traceparent`, `tracestate`), for a BullMQ job's
 * data (`traceContext`) or any other message that crosses a process boundary.
 */
export function injectTraceContext(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a carrier from `injectTraceContext` describes (the root context if none). */
export function extractTraceContext(carrier: Record<string, string> | undefined | null): Context {
  return carrier && typeof carrier === 'object' ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Defaults to the active context. */
  parent?: Context;
  /** Whether an error marks the span failed (default: every error does). */
  isFailure?: (error: unknown) => boolean;
}

/** Runs `fn` in a new active span that ends when `fn`'s promise settles, failed if it rejects. */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const { kind = SpanKind.INTERNAL, attributes, parent = context.active(), isFailure } = options;
  return gatewayTracer().startActiveSpan(name, { kind, attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      if (isFailure?.(error) ?? true) recordSpanError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `fn` in a consumer span that continues the trace of `carrier` (a job's `traceContext`), so
 * a BullMQ job is part of the request that enqueued it. The span ends when `fn`'s promise settles.
 */
export function runWithExtractedContext<T>(carrier: Record<string, string> | undefined | null, fn: () => T | Promise<T>, spanName = 'job process'): Promise<T> {
  return inSpan(spanName, { kind: SpanKind.CONSUMER, parent: extractTraceContext(carrier) }, async () => fn());
}

const natsGetter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => (carrier ? [...carrier.keys()] : []),
  get: (carrier, key) => (carrier?.has(key) ? carrier.get(key) : undefined),
};

const natsSetter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/**
 * NATS message headers carrying the active trace context, or undefined outside any trace. `into`
 * adds them to headers the message already has (e.g. a JetStream message id).
 */
export function traceHeaders(into?: MsgHdrs, ctx: Context = context.active()): MsgHdrs | undefined {
  if (!trace.getSpanContext(ctx)) return into;
  const headers = into ?? natsHeaders();
  propagation.inject(ctx, headers, natsSetter);
  return headers;
}

/** The trace context NATS message headers carry (the root context if none). */
export function extractNatsTraceContext(headers: MsgHdrs | undefined | null): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, natsGetter) : ROOT_CONTEXT;
}
