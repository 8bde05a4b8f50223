import { Inject, Injectable, Logger } from '@nestjs/common';
import { ErrorCode, Subjects, TEXT_ROUTES, TextFormat, TextGenerationRequest, TextWireFrame, usageEvent } from '@gateway/contracts';
import { DomainError, JetStreamConnection, publishUsageEvent, traceHeaders } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { TimeoutError } from 'rxjs';
import { BudgetService } from '../billing/budget.service';
import { MeteredRequest } from '../admission/admission.guard';
import { callerContext } from '../auth/caller-context';
import { errorBody } from '../errors/error-formats';
import { streamErrorFrame } from '../errors/stream-error-frame';
import { toHttpError } from '../errors/to-http-error';
import { isNoResponders, ReplyExchange, ReplyInbox } from '../nats/reply-inbox';
import { cancelAtRouter, ROUTER_GONE, RouterProbes, RouterWatch } from '../nats/router-liveness';
import { ServiceClient } from '../nats/service-client';
import { RequestObserver } from '../observability/request-observer';
import { errorFormatOf } from '../policy/error-format.decorator';
import { MeteredRelay } from '../policy/metering.decorators';

export const INFERENCE_IDLE_TIMEOUT_MS = Symbol('INFERENCE_IDLE_TIMEOUT_MS');
export const INFERENCE_SILENCE_TIMEOUT_MS = Symbol('INFERENCE_SILENCE_TIMEOUT_MS');

const textDecoder = new TextDecoder();

/** No router is subscribed to `inference.text`: 503, the client retries (same code as a NATS no-responders error). */
const NO_ROUTER = { code: 'NO_RESPONDERS' };

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Proxies such as nginx must not buffer the stream.
  'x-accel-buffering': 'no',
};

/**
 * Relays one text-generation request to the router and its answer to the client: a JSON reply, or a
 * server-sent-event stream written frame by frame as the router's NATS messages arrive. A client
 * that disconnects cancels the router's upstream call.
 */
@Injectable()
@MeteredRelay()
export class TextGenerationService {
  private readonly logger = new Logger(TextGenerationService.name);

  constructor(
    private readonly inbox: ReplyInbox,
    private readonly services: ServiceClient,
    @Inject(INFERENCE_IDLE_TIMEOUT_MS) private readonly idleTimeoutMs: number,
    private readonly budget: BudgetService,
    private readonly observer: RequestObserver,
    @Inject(INFERENCE_SILENCE_TIMEOUT_MS) private readonly silenceTimeoutMs: number,
    private readonly jetstream: JetStreamConnection,
    private readonly probes: RouterProbes,
  ) {}

  async relay(format: TextFormat, request: MeteredRequest, reply: FastifyReply): Promise<void> {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new DomainError(ErrorCode.InvalidRequest, 'Request body must be a JSON object');
    }
    const { principal } = request;
    const requestId = String(request.id);
    // A model not in the catalog costs nothing: the router answers 404 and nothing is charged.
    // The guard reserved the estimate (none for a model not in the catalog): settling it is this relay's now.
    const reserved = this.budget.claim(request);
    const payload: TextGenerationRequest = {
      ...callerContext(request),
      format,
      body: body as Record<string, unknown>,
      ...(request.costEstimate?.outputCap !== undefined ? { reservedOutputTokens: request.costEstimate.outputCap } : {}),
    };
    return new Promise<void>((resolve) => {
      let streaming = false;
      let answered = false;
      let finished = false;
      let eventsWritten = 0;
      // What reached the client, as the router counted it: billed by this edge if the router dies.
      const relayed = { inputTokens: 0, outputTokens: 0 };
      const replied = this.services.timeRequest(Subjects.inferenceText);
      let exchange: ReplyExchange | undefined;
      // Router liveness: silence gets the replica's connection probed; a slow router is waited for.
      const watch = new RouterWatch(this.probes, { silenceMs: this.silenceTimeoutMs, idleMs: this.idleTimeoutMs }, (error) => fail(error));
      const stop = () => {
        exchange?.close();
        watch.stop();
      };
      const finish = () => {
        finished = true;
        resolve();
      };
      const fail = (error: unknown) => {
        if (finished) return;
        stop();
        replied();
        // Gave up (the router went away, or too long without an answer): the router, if it is still
        // at it, stops; a request whose client gets an error status before any answer is abandoned,
        // which the router records as an error (never charged) rather than as cancelled.
        cancelAtRouter(this.inbox, requestId, !answered);
        // The router never answered: no usage event will come to settle the reservation.
        if (reserved && !answered) void this.budget.release(principal, requestId).catch(() => undefined);
        // The router went away mid-stream (died, or cut off): what reached the client is billed
        // from here, and the usage event settles the reservation.
        if (streaming && (error instanceof TimeoutError || error === ROUTER_GONE)) this.recordRelayed(payload, relayed);
        const problem = toHttpError(error) ?? { status: 500, message: 'Internal error; quote the request id when reporting it' };
        if (problem.status >= 500) this.logger.error(`inference ${request.id} failed: ${JSON.stringify(error)}`);
        if (streaming) {
          // Headers are gone: the failure becomes the stream's last event, in the client's format.
          reply.raw.end(streamErrorFrame(format, problem, requestId, eventsWritten));
        } else if (!reply.sent) {
          void reply.status(problem.status).send(errorBody(errorFormatOf(request), problem, requestId));
        }
        // else: the whole answer went out; only the router's end frame went missing.
        finish();
      };
      const completed = () => {
        stop();
        if (streaming) reply.raw.end();
        else if (!answered && !reply.raw.destroyed) {
          // The router ended the exchange without an answer (it was cancelled under the client).
          const problem = { status: 502, message: 'The inference router ended the request without an answer; quote the request id when reporting it' };
          void reply.status(problem.status).send(errorBody(errorFormatOf(request), problem, requestId));
        }
        finish();
      };
      const onFrame = (frame: TextWireFrame) => {
        if (frame.kind === 'heartbeat') return watch.frame(false, frame.router);
        if (frame.kind === 'end') return completed();
        if (frame.kind === 'error') return fail(frame.error);
        watch.frame(true, frame.kind === 'sse' ? frame.router : undefined);
        answered = true;
        replied();
        if (frame.kind === 'json') {
          if (!streaming && frame.retryAfter !== undefined) void reply.header('retry-after', String(frame.retryAfter));
          if (!streaming) void reply.status(frame.status).send(frame.body);
          // The whole answer: done here, without waiting for the router's end frame.
          if (frame.last) completed();
          return;
        }
        if (!streaming) {
          streaming = true;
          reply.hijack();
          // Headers set so far (request ids, rate limits) go out with the stream's.
          reply.raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...SSE_HEADERS });
          this.observer.streamStarted(request);
        }
        for (const text of frame.frames) reply.raw.write(text);
        eventsWritten += frame.frames.length;
        relayed.inputTokens = frame.inputTokens ?? relayed.inputTokens;
        relayed.outputTokens = frame.outputTokens ?? relayed.outputTokens;
        // The stream's final events: the response ends now, so a client that closes on them (Codex
        // on `response.completed`) has not left early.
        if (frame.last) completed();
      };
      try {
        exchange = this.inbox.request(Subjects.inferenceText, JSON.stringify(payload), traceHeaders(), (message) => {
          if (finished) return;
          if (isNoResponders(message)) return fail(NO_ROUTER);
          let frame: TextWireFrame;
          try {
            frame = JSON.parse(textDecoder.decode(message.data)) as TextWireFrame;
          } catch {
            return fail(new DomainError(ErrorCode.Internal, 'The inference router sent a frame that is not JSON'));
          }
          onFrame(frame);
        });
      } catch (error) {
        // Not sent (too large for one NATS message, connection closed): the router never heard of it.
        return fail(error);
      }
      // The response closing before it finished means the client went away.
      const clientGone = () => {
        if (finished || reply.raw.writableFinished) return;
        stop();
        cancelAtRouter(this.inbox, requestId, false);
        finish();
      };
      // It may have gone already, while the request was authorised and its cost reserved: the
      // router still hears of it (and records it as cancelled), but stops at once.
      if (reply.raw.destroyed) clientGone();
      else reply.raw.once('close', clientGone);
    });
  }

  /**
   * The usage event the router could not send, with the tokens this edge relayed. Same message id
   * (the request id) as the router's: whichever is published first is the one JetStream and the
   * ledger keep, so a router that was only cut off and reports later is not billed twice.
   */
  private recordRelayed(request: TextGenerationRequest, relayed: { inputTokens: number; outputTokens: number }): void {
    const event = usageEvent(request, {
      model: typeof request.body.model === 'string' ? request.body.model : '',
      route: TEXT_ROUTES[request.format],
      ...relayed,
      status: 'cancelled',
    });
    void publishUsageEvent(() => this.jetstream.publisher, event, this.logger).catch(() => undefined); // failures are logged
  }
}
