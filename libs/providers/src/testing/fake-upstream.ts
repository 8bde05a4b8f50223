import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake upstream received. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The client socket's port: equal ports mean a reused keep-alive connection. */
  remotePort: number;
}

export type FakeHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** A local HTTP server (127.0.0.1, random port) that plays an upstream provider in adapter tests. */
export interface FakeUpstream {
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replaces the handler for the following requests. */
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  let handler: FakeHandler = (_request, response) => sendJson(response, 404, { error: { message: 'no handler' } });
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: text ? JSON.parse(text) : undefined,
        remotePort: incoming.socket.remotePort ?? 0,
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded, response)).catch((err: unknown) => response.destroy(err as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => (handler = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** One server-sent event: `data` objects are JSON-encoded, strings sent as they are. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** Writes an SSE response, optionally pausing between events, and ends it. */
export async function sendSse(response: ServerResponse, events: SseEvent[], delayMs = 0): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (response.destroyed) return;
    const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
    response.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  response.end();
}

/** Drains an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
