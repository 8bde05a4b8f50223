import { context, gatewayTracer, propagation, ROOT_CONTEXT, Span, SpanKind, trace } from '@gateway/platform';
import { createServer, IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';

interface RequestTrace {
  span: Span;
  /** performance.now() when the request arrived. */
  startedAt: number;
}

const traces = new WeakMap<IncomingMessage, RequestTrace>();

/** The server span and arrival time of a request (set for every request the edge serves). */
export function requestTrace(request: IncomingMessage): RequestTrace | undefined {
  return traces.get(request);
}

/**
 * Fastify's `serverFactory`: an HTTP server that opens a server span per request, continuing the
 * client's W3C `traceparent` if it sent one, and runs everything the request causes — hooks,
 * guards, handlers, the NATS messages they send — inside it. The request observer names and
 * completes the span once the route and status are known. Fastify's server timeouts are applied as
 * Fastify would apply them to a server of its own (above all `keepAliveTimeout`, 72 s: Node's own
 * 5 s makes load balancers that keep idle connections for 60 s send requests on closed sockets).
 */
export function tracedServerFactory(handler: RequestListener, options: ServerTimeouts = {}): Server {
  // Node checks request and header timeouts only this often: the check interval adds to the bounds.
  const checking = options.connectionsCheckingInterval === undefined ? {} : { connectionsCheckingInterval: options.connectionsCheckingInterval };
  const server = createServer(checking, (request: IncomingMessage, response: ServerResponse) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = gatewayTracer().startSpan(
      request.method ?? 'HTTP',
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method ?? '' } },
      parent,
    );
    traces.set(request, { span, startedAt: performance.now() });
    const active = trace.setSpan(parent, span);
    // Not bound to the emitters (\`context.bind(active, request)\` wraps every listener added to them,
    // several per request): the body arrives in later events, but Fastify runs its body parser and
    // the route from an AsyncResource made inside this context, so they stay in the span.
    // After the observer's own 'close' listener, which names the span: ending it is the last thing.
    response.once('close', () => setImmediate(() => span.end()));
    context.with(active, () => handler(request, response));
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  if (options.headersTimeout !== undefined) server.headersTimeout = options.headersTimeout;
  if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
  return server;
}

/** The server options Fastify passes its `serverFactory` (with its defaults filled in). */
export interface ServerTimeouts {
  keepAliveTimeout?: number;
  requestTimeout?: number;
  /** Not passed by Fastify: the edge adds it (`HEADERS_TIMEOUT_MS`). */
  headersTimeout?: number;
  /** Not passed by Fastify: how often Node enforces `requestTimeout` and `headersTimeout`. */
  connectionsCheckingInterval?: number;
  connectionTimeout?: number;
}
