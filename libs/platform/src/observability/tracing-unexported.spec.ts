import { context } from '@opentelemetry/api';
import { activeTraceIds, extractTraceContext, gatewayTracer, injectTraceContext, startTracing, trace, traceHeaders } from './tracing';

/** Without an OTLP endpoint (or any other span processor) nothing is recorded, but traces still flow. */
describe('tracing with nothing to export to', () => {
  beforeAll(async () => {
    const tracing = await startTracing('tracing-unexported-spec', { env: {} });
    expect(tracing.exporting).toBe(false);
  });

  it('gives every span trace ids for the logs without recording it', () => {
    const span = gatewayTracer().startSpan('request');
    const ids = context.with(trace.setSpan(context.active(), span), () => activeTraceIds());
    span.end();
    expect(span.isRecording()).toBe(false);
    expect(ids.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.trace_id).not.toBe('0'.repeat(32));
    expect(ids.span_id).toBe(span.spanContext().spanId);
  });

  it("continues a client's traceparent and passes the trace on over NATS and in job data", () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = extractTraceContext({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    const span = gatewayTracer().startSpan('request', {}, parent);
    const active = trace.setSpan(parent, span);
    const spanId = span.spanContext().spanId;

    expect(activeTraceIds(active)).toEqual({ trace_id: traceId, span_id: spanId });
    expect(traceHeaders(undefined, active)?.get('traceparent')).toBe(`00-${traceId}-${spanId}-00`);
    expect(injectTraceContext(active)).toEqual({ traceparent: `00-${traceId}-${spanId}-00` });
    span.end();
  });
});
