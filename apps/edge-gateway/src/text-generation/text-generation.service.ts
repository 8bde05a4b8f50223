import { Injectable, Logger } from '@nestjs/common';
import { Rpc, TEXT_ROUTES, TextFormat, TextGenerationRequest, usageEvent } from '@gateway/contracts';
import { JetStreamConnection, publishUsageEvent } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { MeteredRequest } from '../admission/admission.guard';
import { errorBody } from '../errors/error-formats';
import { streamErrorFrame } from '../errors/stream-error-frame';
import { toHttpError } from '../errors/to-http-error';
import { RouterRelay } from '../nats/router-relay';
import { RequestObserver } from '../observability/request-observer';
import { errorFormatOf } from '../policy/error-format.decorator';
import { MeteredRelay } from '../policy/metering.decorators';
import { textGenerationRequest } from './text-generation-request';
import { SSE_HEADERS } from '../nats/streamed-answer';
import { ClientBacklog } from '../nats/client-backlog';

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
    private readonly routerRelay: RouterRelay,
    private readonly observer: RequestObserver,
    private readonly jetstream: JetStreamConnection,
    private readonly backlog: ClientBacklog,
  ) {}

  async relay(format: TextFormat, request: MeteredRequest, reply: FastifyReply): Promise<void> {
    const requestId = String(request.id);
    // A model not in the catalog costs nothing: the router answers 404 and nothing is charged.
    // The guard reserved the estimate (none for a model not in the catalog): the relay claims it.
    // A stream's events come as raw frames: written to the client as the bytes the router sent.
    const payload: TextGenerationRequest = {
      ...textGenerationRequest(format, request),
      ...(request.costEstimate?.outputCap !== undefined ? { reservedOutputTokens: request.costEstimate.outputCap } : {}),
      rawFrames: true,
    };
    return new Promise<void>((resolve) => {
      // What reached the client, as the router counted it: billed by this edge if the router dies.
      const stream = { started: false, eventsWritten: 0, inputTokens: 0, outputTokens: 0 };
      this.routerRelay.open(
        Rpc.inferenceText,
        request,
        reply,
        payload,
        { route: TEXT_ROUTES[format] },
        {
          frame: (frame, relay) => {
            if (frame.kind === 'json') {
              if (!stream.started && frame.retryAfter !== undefined) void reply.header('retry-after', String(frame.retryAfter));
              if (!stream.started) void reply.status(frame.status).send(frame.body);
              // The whole answer: done here, without waiting for the router's end frame.
              if (frame.last) relay.finish();
              return;
            }
            if (!stream.started) {
              stream.started = true;
              reply.hijack();
              // Headers set so far (request ids, rate limits) go out with the stream's.
              reply.raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...SSE_HEADERS });
              this.observer.streamStarted(request);
            }
            // A client too far behind is cut off here (its leaving ends the relay).
            if (frame.kind === 'sse-bytes') {
              if (!this.backlog.write(request, reply.raw, frame.body)) return;
              stream.eventsWritten += frame.events;
            } else {
              // A router of the previous release: the events as JSON strings.
              for (const text of frame.frames) if (!this.backlog.write(request, reply.raw, text)) return;
              stream.eventsWritten += frame.frames.length;
            }
            stream.inputTokens = frame.inputTokens ?? stream.inputTokens;
            stream.outputTokens = frame.outputTokens ?? stream.outputTokens;
            // The stream's final events: the response ends now, so a client that closes on them (Codex
            // on `response.completed`) has not left early.
            if (frame.last) relay.finish();
          },
          ended: (ending, state) => {
            if (ending.kind === 'client-gone') return resolve();
            if (ending.kind === 'answered') {
              if (stream.started) reply.raw.end();
              else if (state.frames === 0 && !reply.raw.destroyed) {
                // The router ended the exchange without an answer (it was cancelled under the client).
                const problem = { status: 502, message: 'The inference router ended the request without an answer; quote the request id when reporting it' };
                void reply.status(problem.status).send(errorBody(errorFormatOf(request), problem, requestId));
              }
              return resolve();
            }
            // The router went away mid-stream (died, or cut off): what reached the client is billed
            // from here, and the usage event settles the reservation.
            if (stream.started && (ending.kind === 'router-gone' || ending.kind === 'idle')) {
              this.recordRelayed(payload, { inputTokens: stream.inputTokens, outputTokens: stream.outputTokens });
            }
            const problem = toHttpError(ending.error) ?? { status: 500, message: 'Internal error; quote the request id when reporting it' };
            if (problem.status >= 500) this.logger.error(`inference ${request.id} failed: ${JSON.stringify(ending.error)}`);
            if (stream.started) {
              // Headers are gone: the failure becomes the stream's last event, in the client's format.
              reply.raw.end(streamErrorFrame(format, problem, requestId, stream.eventsWritten));
            } else if (!reply.sent) {
              void reply.status(problem.status).send(errorBody(errorFormatOf(request), problem, requestId));
            }
            // else: the whole answer went out; only the router's end frame went missing.
            resolve();
          },
        },
      );
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
