/**
 * A fake OpenTelemetry collector for the end-to-end suite: an HTTP server on 127.0.0.1 that
 * accepts OTLP/HTTP JSON trace exports (`POST /v1/traces`, what `@opentelemetry/exporter-trace-otlp-http`
 * sends) and serves the spans it received, flattened, from `GET /__spans`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CollectedSpan {
  /** `service.name` of the exporting process. */
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

export interface FakeOtlpCollector {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

const valueOf = (value: OtlpValue): unknown => value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;

const attributes = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

function flatten(body: any): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resourceSpans of body?.resourceSpans ?? []) {
    const service = String(attributes(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          attributes: attributes(span.attributes),
        });
      }
    }
  }
  return spans;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOtlpCollector(): Promise<FakeOtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        const text = await readBody(request);
        if (!String(request.headers['content-type']).includes('json')) {
          response.writeHead(415).end();
          return;
        }
        spans.push(...flatten(JSON.parse(text)));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else if (request.method === 'GET' && request.url === '/__spans') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(spans));
      } else {
        response.writeHead(404).end();
      }
    })().catch(() => response.writeHead(400).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
