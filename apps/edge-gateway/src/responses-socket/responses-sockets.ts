import { Inject, Injectable, Logger } from '@nestjs/common';
import { GracefulShutdown } from '@gateway/platform';
import { createParser } from 'eventsource-parser';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { AuthCacheService } from '../auth/auth-cache.service';
import { bearerKey } from '../auth/api-key.guard';
import { EdgeEnv } from '../config/edge.env';
import { errorBody } from '../errors/error-formats';

export const RESPONSES_SOCKET_PATH = '/v1/responses';

/** Close codes (RFC 6455): what a client sees when the edge ends a socket. */
export const SocketClose = {
  idle: { code: 1000, reason: 'idle timeout' },
  shutdown: { code: 1001, reason: 'server shutting down' },
  revoked: { code: 1008, reason: 'API key revoked or disabled' },
  failed: { code: 1011, reason: 'internal error' },
} as const;

/** The handshake's headers every `response.create` is sent with, as the HTTP request would carry them. */
const FORWARDED_HEADERS = [
  'authorization',
  'x-forwarded-for',
  'x-forwarded-proto',
  'forwarded',
  'x-real-ip',
  'user-agent',
  'openai-beta',
  'openai-organization',
  'openai-project',
] as const;

/** What an HTTP refusal of the handshake keeps of the pipeline's answer. */
const REFUSAL_HEADERS = ['content-type', 'x-request-id', 'retry-after', 'www-authenticate'];

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return kept;
}

/** The HTTP answer that refuses a handshake, written on the raw socket (no upgrade happened). */
function refuseHandshake(socket: Duplex, status: number, headers: Record<string, string>, body: string): void {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, 'connection: close', `content-length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** The OpenAI WebSocket error event for an HTTP error answer: `{type: "error", status, error: {...}}`. */
function errorEvent(status: number, body: unknown): string {
  const error = body && typeof body === 'object' && 'error' in body ? (body as { error: unknown }).error : body;
  return JSON.stringify({ type: 'error', status, error });
}

/** The events that end a response's stream (the SSE event names the responses format writes). */
const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** One response on a socket: its injected HTTP answer, and whether its last event went out. */
interface Turn {
  answer?: LightMyRequestResponse;
  ended: boolean;
}

interface Handshake {
  key: string;
  accountId: string;
  headers: Record<string, string>;
  remoteAddress: string | undefined;
}

/**
 * The Responses API's WebSocket mode on `GET /v1/responses`. Each `response.create` message is
 * served by the edge's own `POST /v1/responses` route (injected into Fastify with the handshake's
 * key and address, `stream: true`), so authentication, the key's scope, revocation, rate limits,
 * budgets, metering and routing are exactly the HTTP path's; the SSE events it writes go out one
 * JSON message each. One response at a time per socket.
 *
 * The handshake is checked the same way (`GET /v1/responses` through the pipeline, which answers
 * 426 to a caller that passes): a bad key is the HTTP 401 it would be, before any upgrade.
 * Sockets close with 1000 after `RESPONSES_WS_IDLE_SECONDS` without a response, 1008 when a key
 * change makes their key unusable, and 1001 on shutdown once their response in progress ends.
 */
@Injectable()
export class ResponsesSockets {
  private readonly logger = new Logger(ResponsesSockets.name);
  private readonly server: WebSocketServer;
  private readonly sockets = new Set<ResponsesSocket>();
  private fastify?: FastifyInstance;
  private draining = false;
  private drained?: () => void;

  constructor(
    private readonly auth: AuthCacheService,
    shutdown: GracefulShutdown,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'BODY_LIMIT_BYTES' | 'RESPONSES_WS_IDLE_SECONDS'>,
  ) {
    // A message larger than an HTTP body may be closes the socket with 1009.
    this.server = new WebSocketServer({ noServer: true, maxPayload: env.BODY_LIMIT_BYTES });
    shutdown.onDrain('responses websockets', () => this.drain());
    auth.onAccountChange((accountId) => {
      for (const socket of this.sockets) if (socket.accountId === accountId) void socket.recheckKey();
    });
  }

  get open(): number {
    return this.sockets.size;
  }

  get idleMs(): number {
    return this.env.RESPONSES_WS_IDLE_SECONDS * 1000;
  }

  /** Takes the HTTP server's upgrades; `fastify` serves each socket's requests. */
  attach(server: Server, fastify: FastifyInstance): void {
    this.fastify = fastify;
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      void this.upgrade(request, socket, head).catch((error: Error) => {
        this.logger.error(`websocket upgrade failed: ${error.message}`);
        refuseHandshake(
          socket,
          500,
          { 'content-type': 'application/json' },
          JSON.stringify(errorBody('openai', { status: 500, message: 'Internal error' }, '')),
        );
      });
    });
  }

  /** Runs a request through the edge's HTTP pipeline, as a client on the socket's address would send it. */
  inject(handshake: Handshake, method: 'GET' | 'POST', body: Record<string, unknown> | undefined, payloadAsStream: boolean): Promise<LightMyRequestResponse> {
    if (!this.fastify) throw new Error('ResponsesSockets is not attached');
    return this.fastify.inject({
      method,
      url: RESPONSES_SOCKET_PATH,
      headers: body ? { ...handshake.headers, 'content-type': 'application/json' } : handshake.headers,
      ...(body ? { payload: JSON.stringify(body) } : {}),
      ...(handshake.remoteAddress ? { remoteAddress: handshake.remoteAddress } : {}),
      payloadAsStream,
    });
  }

  /** Whether the key still authenticates and its proxy-key state allows use (undefined when key-service cannot tell). */
  async keyUsable(key: string): Promise<boolean | undefined> {
    const authenticated = await this.auth.authenticate(key).catch(() => undefined);
    if (authenticated === undefined) return undefined;
    if (authenticated === null) return false;
    const proxy = authenticated.principal.proxy;
    if (!proxy) return true;
    return proxy.isActive && (proxy.expiresAt === null || Math.floor(Date.now() / 1000) < proxy.expiresAt);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  failed(error: Error): void {
    this.logger.error(`websocket response failed: ${error.message}`);
  }

  closed(socket: ResponsesSocket): void {
    this.sockets.delete(socket);
    if (this.sockets.size === 0) this.drained?.();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const path = (request.url ?? '').split('?')[0].replace(/\/+$/, '');
    if (path !== RESPONSES_SOCKET_PATH) {
      const body = errorBody('openai', { status: 404, message: `No WebSocket at ${path || '/'}: the Responses WebSocket is GET ${RESPONSES_SOCKET_PATH}` }, '');
      return refuseHandshake(socket, 404, { 'content-type': 'application/json' }, JSON.stringify(body));
    }
    if (this.draining) {
      const body = errorBody('openai', { status: 503, message: 'The gateway is shutting down; reconnect' }, '');
      return refuseHandshake(socket, 503, { 'content-type': 'application/json', 'retry-after': '1' }, JSON.stringify(body));
    }
    const handshake: Handshake = {
      key: bearerKey(request as never, false) ?? '',
      accountId: '',
      headers: forwardedHeaders(request.headers),
      remoteAddress: request.socket.remoteAddress,
    };
    // The pipeline answers 426 to a caller that may open a socket, and its refusal to any other.
    const answer = await this.inject(handshake, 'GET', undefined, false);
    if (answer.statusCode !== 426) {
      const headers: Record<string, string> = {};
      for (const name of REFUSAL_HEADERS) if (typeof answer.headers[name] === 'string') headers[name] = answer.headers[name] as string;
      return refuseHandshake(socket, answer.statusCode, headers, answer.body);
    }
    const authenticated = await this.auth.authenticate(handshake.key);
    if (!authenticated) return refuseHandshake(socket, 401, {}, '');
    handshake.accountId = authenticated.principal.accountId;
    this.server.handleUpgrade(request, socket, head, (ws) => {
      const session = new ResponsesSocket(ws, this, handshake);
      this.sockets.add(session);
    });
  }

  /** Shutdown: new messages are refused, idle sockets close now, busy ones after their response. */
  private async drain(): Promise<void> {
    this.draining = true;
    if (this.sockets.size === 0) return;
    const done = new Promise<void>((resolve) => (this.drained = resolve));
    for (const socket of this.sockets) socket.closeWhenIdle(SocketClose.shutdown);
    await done;
  }
}

/** One client's socket: its handshake, its response in progress, its idle timer. */
class ResponsesSocket {
  /** The response in progress, if any. */
  private turn?: Turn;
  private closeAfter?: { code: number; reason: string };
  private idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly ws: WebSocket,
    private readonly owner: ResponsesSockets,
    private readonly handshake: Handshake,
  ) {
    ws.on('message', (data: RawData) => void this.onMessage(data));
    ws.on('close', () => this.onClose());
    ws.on('error', () => ws.terminate());
    this.armIdle();
  }

  get accountId(): string {
    return this.handshake.accountId;
  }

  /** After a key change on the account: a key that no longer authenticates ends the socket. */
  async recheckKey(): Promise<void> {
    if ((await this.owner.keyUsable(this.handshake.key)) === false) this.closeWhenIdle(SocketClose.revoked);
  }

  closeWhenIdle(close: { code: number; reason: string }): void {
    if (this.turn) this.closeAfter ??= close;
    else this.close(close);
  }

  private close(close: { code: number; reason: string }): void {
    clearTimeout(this.idleTimer);
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(close.code, close.reason);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.closeWhenIdle(SocketClose.idle), this.owner.idleMs);
    this.idleTimer.unref();
  }

  private send(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  private refuse(status: number, message: string, param: string | null, code?: string): void {
    this.send(JSON.stringify({ type: 'error', status, error: { type: 'invalid_request_error', code: code ?? null, message, param } }));
  }

  private async onMessage(data: RawData): Promise<void> {
    this.armIdle();
    let event: unknown;
    try {
      event = JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
    } catch {
      return this.refuse(400, 'The message is not valid JSON', null, 'invalid_json');
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) return this.refuse(400, 'The message must be a JSON object', null);
    const { type, stream: _stream, background, stream_id: streamId, ...body } = event as Record<string, unknown>;
    if (type !== 'response.create') {
      return this.refuse(400, `Unknown event type ${JSON.stringify(type)}: send {"type": "response.create", ...}`, 'type', 'unknown_event_type');
    }
    if (background !== undefined && background !== false) return this.refuse(400, 'background is not supported over WebSocket', 'background');
    if (this.turn) {
      return this.refuse(
        409,
        'A response is in progress on this socket: wait for its last event (one response at a time per socket)',
        null,
        'response_in_progress',
      );
    }
    if (this.owner.isDraining) {
      this.send(errorEvent(503, errorBody('openai', { status: 503, message: 'The gateway is shutting down; reconnect' }, '')));
      return this.close(SocketClose.shutdown);
    }
    // The socket takes the next response.create once this one's last event is sent (a client sends
    // it on that event, before the injected HTTP response has quite ended), or when the call ends.
    const turn: Turn = { answer: undefined, ended: false };
    this.turn = turn;
    const end = () => {
      if (turn.ended) return;
      turn.ended = true;
      if (this.turn === turn) this.turn = undefined;
      this.armIdle();
      if (this.closeAfter) this.close(this.closeAfter);
    };
    try {
      await this.respond(turn, end, { ...body, stream: true }, typeof streamId === 'string' || typeof streamId === 'number' ? streamId : undefined);
    } catch (error) {
      // The client left mid-response (the stream was cut under it), or the edge failed: the socket ends.
      if (!turn.ended) {
        if (this.ws.readyState === WebSocket.OPEN) this.owner.failed(error as Error);
        this.send(errorEvent(500, errorBody('openai', { status: 500, message: 'Internal error' }, '')));
        this.closeAfter ??= SocketClose.failed;
      }
    } finally {
      end();
    }
  }

  /** One `response.create`, through `POST /v1/responses`: its SSE events, or its HTTP error as an `error` event. */
  private async respond(turn: Turn, end: () => void, body: Record<string, unknown>, streamId: string | number | undefined): Promise<void> {
    const answer = await this.owner.inject(this.handshake, 'POST', body, true);
    turn.answer = answer;
    if (this.ws.readyState !== WebSocket.OPEN) return this.cancel(turn);
    const stream = answer.stream();
    const contentType = String(answer.headers['content-type'] ?? '');
    if (answer.statusCode === 200 && contentType.startsWith('text/event-stream')) {
      const parser = createParser({
        onEvent: (message) => {
          if (message.data === '[DONE]') return;
          if (streamId === undefined) this.send(message.data);
          else this.send(JSON.stringify({ ...(JSON.parse(message.data) as object), stream_id: streamId }));
          if (message.event !== undefined && TERMINAL_EVENTS.has(message.event)) end();
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of stream) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: sent as the message
    }
    // The key no longer authenticates (revoked, disabled, expired): the socket is of no further use.
    if (answer.statusCode === 401) this.closeAfter ??= SocketClose.revoked;
    this.send(errorEvent(answer.statusCode, parsed));
  }

  /** The client left mid-response: the HTTP response is closed under the relay, which cancels the router's call. */
  private cancel(turn: Turn): void {
    const raw = turn.answer?.raw.res;
    if (raw && !raw.destroyed) raw.destroy();
  }

  private onClose(): void {
    clearTimeout(this.idleTimer);
    if (this.turn) this.cancel(this.turn);
    this.owner.closed(this);
  }
}
