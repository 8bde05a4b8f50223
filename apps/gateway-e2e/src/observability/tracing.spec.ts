/**
 * One request is one trace: the W3C `traceparent` a client sends is continued by the edge, carried
 * in NATS message headers to the router and in the usage event to metering; every service exports
 * its spans over OTLP/HTTP to the suite's fake collector.
 */
import { randomBytes } from 'node:crypto';
import { api, createAccount, sleep, TestAccount } from '../support/api';
import type { CollectedSpan } from '../support/fake-otlp-collector';
import { suiteInfo } from '../support/suite-info';
import { VideoStream } from '../support/video-stream';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

async function spansOf(traceId: string): Promise<CollectedSpan[]> {
  const response = await fetch(`${suiteInfo().otlpCollector}/__spans`);
  return ((await response.json()) as CollectedSpan[]).filter((span) => span.traceId === traceId);
}

/** Waits until the collector holds a span matching each of `wanted` in the trace (exports are batched). */
async function waitForSpans(traceId: string, wanted: ((span: CollectedSpan) => boolean)[]): Promise<CollectedSpan[]> {
  let spans: CollectedSpan[] = [];
  for (let i = 0; i < 150; i++) {
    spans = await spansOf(traceId);
    if (wanted.every((match) => spans.some(match))) return spans;
    await sleep(100);
  }
  throw new Error(`trace ${traceId} is missing spans; it has ${JSON.stringify(spans.map((span) => [span.service, span.name]))}`);
}

const find = (spans: CollectedSpan[], service: string, name: string): CollectedSpan => {
  const span = spans.find((candidate) => candidate.service === service && candidate.name === name);
  if (!span) throw new Error(`no ${service} span named ${name}`);
  return span;
};

describe('trace propagation', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('continues the client traceparent from the edge through the router to metering', async () => {
    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      headers: { traceparent: `00-${traceId}-${clientSpanId}-01` },
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello, trace' }], stream: true },
    });
    expect(response.status).toBe(200);
    expect(response.text).toContain('data: [DONE]');

    const spans = await waitForSpans(traceId, [
      (span) => span.service === 'edge-gateway' && span.kind === SERVER,
      (span) => span.service === 'inference-router' && span.name === 'inference.text',
      (span) => span.service === 'inference-router' && span.kind === CLIENT,
      (span) => span.service === 'metering-service' && span.kind === CONSUMER,
    ]);
    const edge = find(spans, 'edge-gateway', 'POST /v1/chat/completions');
    expect(edge).toMatchObject({ kind: SERVER, parentSpanId: clientSpanId });
    expect(edge.attributes).toMatchObject({ 'http.route': '/v1/chat/completions', 'http.response.status_code': 200 });
    const router = find(spans, 'inference-router', 'inference.text');
    expect(router).toMatchObject({ kind: SERVER, parentSpanId: edge.spanId });
    const upstream = find(spans, 'inference-router', 'upstream simulator');
    expect(upstream).toMatchObject({ kind: CLIENT, parentSpanId: router.spanId });
    const metering = find(spans, 'metering-service', 'usage.recorded process');
    expect(metering).toMatchObject({ kind: CONSUMER, parentSpanId: router.spanId });
  });

  it('carries a video request through key-service, the BullMQ job data into video-worker, and its usage event into metering', async () => {
    // A new key: authenticating it asks key-service, inside this request's trace.
    const owner = createAccount('pro', '10');
    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const stream = await VideoStream.open({
      key: owner.masterKey,
      headers: { traceparent: `00-${traceId}-${clientSpanId}-01` },
      body: { model: 'sim-video-quick', prompt: 'a traced video' },
    });
    expect(stream.response.status).toBe(200);
    expect(await stream.final()).toMatchObject({ status: 'completed' });

    const spans = await waitForSpans(traceId, [
      (span) => span.service === 'edge-gateway' && span.kind === SERVER,
      (span) => span.service === 'key-service',
      (span) => span.service === 'video-worker' && span.kind === CONSUMER,
      (span) => span.service === 'metering-service' && span.kind === CONSUMER,
    ]);
    const edge = find(spans, 'edge-gateway', 'POST /v1/videos/generations');
    expect(edge).toMatchObject({ kind: SERVER, parentSpanId: clientSpanId });
    const worker = find(spans, 'video-worker', 'video-generation process');
    expect(worker.parentSpanId).toBe(edge.spanId);
    // The worker publishes the usage event from within the job's span (or one of its children).
    const metering = find(spans, 'metering-service', 'usage.recorded process');
    expect(spans.find((span) => span.spanId === metering.parentSpanId)?.service).toBe('video-worker');
  });

  it('starts a trace of its own for a request without traceparent, and the services join it', async () => {
    const response = await api('GET', '/v1/models', { key: account.masterKey });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    let edge: CollectedSpan | undefined;
    for (let i = 0; i < 150 && !edge; i++) {
      const all = (await (await fetch(`${suiteInfo().otlpCollector}/__spans`)).json()) as CollectedSpan[];
      edge = all.find((span) => span.service === 'edge-gateway' && span.attributes['gateway.request_id'] === requestId);
      if (!edge) await sleep(100);
    }
    expect(edge).toMatchObject({ name: 'GET /v1/models', kind: SERVER });
    expect(edge!.parentSpanId).toBeUndefined();
    const spansOfTrace = await waitForSpans(edge!.traceId, [(span) => span.service === 'inference-router' && span.name === 'inference.models']);
    expect(find(spansOfTrace, 'inference-router', 'inference.models').parentSpanId).toBe(edge!.spanId);
  });
});
