import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { headers as natsHeaders, MsgHdrs } from 'nats';
import {
  activeTraceIds,
  extractNatsTraceContext,
  extractTraceContext,
  gatewayTracer,
  injectTraceContext,
  runWithExtractedContext,
  SpanStatusCode,
  startTracing,
  trace,
  traceHeaders,
} from './tracing';

const exporter = new InMemorySpanExporter();

/** Runs `fn` inside a fresh active span and returns its ids with `fn`'s result. */
function inRequestSpan<T>(fn: () => T): { traceId: string; spanId: string; result: T } {
  return gatewayTracer().startActiveSpan('request', (span) => {
    try {
      const { traceId, spanId } = span.spanContext();
      return { traceId, spanId, result: fn() };
    } finally {
      span.end();
    }
  });
}

const remoteIds = (ctx: ReturnType<typeof extractTraceContext>) => {
  const spanContext = trace.getSpanContext(ctx);
  return { traceId: spanContext?.traceId, spanId: spanContext?.spanId, isRemote: spanContext?.isRemote };
};

describe('trace context propagation', () => {
  beforeAll(async () => {
    const tracing = await startTracing('tracing-spec', { env: {}, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(tracing.exporting).toBe(false);
  });

  beforeEach(() => exporter.reset());

  it('round-trips through a plain carrier (BullMQ job data) as a W3C traceparent', () => {
    const { traceId, spanId, result: carrier } = inRequestSpan(() => injectTraceContext());
    expect(carrier).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    expect(remoteIds(extractTraceContext(carrier))).toEqual({ traceId, spanId, isRemote: true });
    // Through JSON, as BullMQ stores job data.
    expect(remoteIds(extractTraceContext(JSON.parse(JSON.stringify(carrier))))).toEqual({ traceId, spanId, isRemote: true });
  });

  it('round-trips through NATS message headers, keeping the headers a message already has', () => {
    const existing = natsHeaders();
    existing.set('Nats-Msg-Id', 'req_1');
    const { traceId, spanId, result: headers } = inRequestSpan(() => traceHeaders(existing) as MsgHdrs);
    expect(headers.get('Nats-Msg-Id')).toBe('req_1');
    expect(headers.get('traceparent')).toBe(`00-${traceId}-${spanId}-01`);
    expect(remoteIds(extractNatsTraceContext(headers))).toEqual({ traceId, spanId, isRemote: true });
  });

  it('adds nothing outside a trace, and extracts nothing from a message without one', () => {
    expect(injectTraceContext()).toEqual({});
    expect(traceHeaders()).toBeUndefined();
    expect(trace.getSpanContext(extractNatsTraceContext(natsHeaders()))).toBeUndefined();
    expect(trace.getSpanContext(extractTraceContext(undefined))).toBeUndefined();
  });

  it('runs a job in a consumer span of the trace that enqueued it, and logs carry its ids', async () => {
    const { traceId, spanId: enqueuer, result: carrier } = inRequestSpan(() => injectTraceContext());
    const seen = await runWithExtractedContext(carrier, async () => activeTraceIds(), 'video-generation process');
    expect(seen.trace_id).toBe(traceId);
    const job = exporter.getFinishedSpans().find((span) => span.name === 'video-generation process')!;
    expect(job.spanContext().traceId).toBe(traceId);
    expect(job.parentSpanContext?.spanId).toBe(enqueuer);
    expect(seen.span_id).toBe(job.spanContext().spanId);
  });

  it('marks the job span failed when the job throws, and rethrows', async () => {
    const { result: carrier } = inRequestSpan(() => injectTraceContext());
    await expect(runWithExtractedContext(carrier, async () => Promise.reject(new Error('render failed')), 'job')).rejects.toThrow('render failed');
    const job = exporter.getFinishedSpans().find((span) => span.name === 'job')!;
    expect(job.status.code).toBe(SpanStatusCode.ERROR);
  });
});
