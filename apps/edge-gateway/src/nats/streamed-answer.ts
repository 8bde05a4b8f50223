import type { Logger } from '@nestjs/common';
import { DomainError, ErrorCode } from '@gateway/errors';
import type { FastifyReply } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { MeteredRequest } from '../admission/admission.guard';
import { errorBody, type HttpError } from '../errors/error-formats';
import { toHttpError } from '../errors/to-http-error';
import type { RequestObserver } from '../observability/request-observer';
import type { ClientBacklog } from './client-backlog';
import { errorFormatOf } from '../policy/error-format.decorator';
import type { RelayEnding, RelayState } from './router-relay';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Proxies such as nginx must not buffer the stream.
  'x-accel-buffering': 'no',
};

/** An error as a server-sent event, the way a stream that already started reports one. */
export const sseErrorEvent = (problem: HttpError, requestId: string): string =>
  `data: ${JSON.stringify({ type: 'error', error: { message: problem.message, code: problem.code ?? null, request_id: requestId } })}\n\n`;

/**
 * One answer written as the router's frames arrive (speech, streamed transcriptions): before its
 * first byte a refusal is the usual JSON error with its status; once started, a failure ends it the
 * way the route says (`endWithError`). `ended` is the `RouterRelay` ending every such route shares.
 */
export class StreamedAnswer {
  private started = false;
  private readonly requestId: string;

  constructor(
    private readonly request: MeteredRequest,
    private readonly reply: FastifyReply,
    private readonly observer: RequestObserver,
    private readonly backlog: ClientBacklog,
    private readonly logger: Logger,
    /** What the route does, for messages and logs (`speech`, `transcription stream`). */
    private readonly what: string,
    /** Ends a started answer after a failure (an SSE error event, or cutting an audio body short). */
    private readonly endWithError: (problem: HttpError) => void,
  ) {
    this.requestId = String(request.id);
  }

  get hasStarted(): boolean {
    return this.started;
  }

  /** Sends the status and headers: from here on the answer is written as it comes. */
  start(headers: OutgoingHttpHeaders): void {
    this.started = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, { ...(this.reply.getHeaders() as OutgoingHttpHeaders), ...headers });
    this.observer.streamStarted(this.request);
  }

  /** A piece of the answer; a client too far behind is cut off instead (see `ClientBacklog`). */
  write(chunk: string | Buffer): void {
    this.backlog.write(this.request, this.reply.raw, chunk);
  }

  fail(problem: HttpError): void {
    if (this.started) return this.endWithError(problem);
    if (!this.reply.sent) void this.reply.status(problem.status).send(errorBody(errorFormatOf(this.request), problem, this.requestId));
  }

  /** The router's error frame: its body as is before the answer started, else the route's error ending. */
  errorFrame(frame: { status: number; body: unknown; retryAfter?: number }): void {
    if (!this.started) {
      if (frame.retryAfter !== undefined) void this.reply.header('retry-after', String(frame.retryAfter));
      void this.reply.status(frame.status).send(frame.body);
      return;
    }
    const error = (frame.body as { error?: { message?: string; code?: string } } | null)?.error;
    this.fail({ status: frame.status, message: error?.message ?? `The ${this.what} failed upstream`, code: error?.code });
  }

  /** How the relay ended, made into the answer's end: the router's completion ends a started answer whole. */
  ended(ending: RelayEnding, state: RelayState, tooLargeField: string): void {
    if (ending.kind === 'client-gone') return;
    if (ending.kind === 'answered' && state.frames > 0) {
      if (this.started && !this.reply.raw.writableEnded) this.reply.raw.end();
      return;
    }
    if (ending.kind === 'answered') {
      return this.fail({ status: 502, message: 'The inference router ended the request without an answer; quote the request id when reporting it' });
    }
    if (ending.kind === 'too-large') {
      const tooLarge = new DomainError(
        ErrorCode.InvalidRequest,
        `${tooLargeField} is too large to forward in one request (the NATS server's max_payload)`,
        tooLargeField,
      );
      return this.fail(toHttpError(tooLarge)!);
    }
    const problem = toHttpError(ending.error) ?? { status: 500, message: 'Internal error; quote the request id when reporting it' };
    if (problem.status >= 500) this.logger.error(`${this.what} ${this.requestId} failed: ${JSON.stringify(ending.error)}`);
    this.fail(problem);
  }
}
