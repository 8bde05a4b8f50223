import { Injectable, Logger } from '@nestjs/common';
import { Rpc, SPEECH_ROUTE, SpeechBody, SpeechDefaults, SpeechFrame, SpeechRequest } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import type { FastifyReply } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { MeteredRequest } from '../admission/admission.guard';
import { callerContext } from '../auth/caller-context';
import { errorBody, type HttpError } from '../errors/error-formats';
import { toHttpError } from '../errors/to-http-error';
import { RouterRelay } from '../nats/router-relay';
import { RequestObserver } from '../observability/request-observer';
import { errorFormatOf } from '../policy/error-format.decorator';
import { MeteredRelay } from '../policy/metering.decorators';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

const sseEvent = (event: object): string => `data: ${JSON.stringify(event)}\n\n`;

/**
 * Relays a speech request to the router and writes its audio as the frames arrive: the bytes
 * themselves (`stream_format: audio`), or `speech.audio.delta` / `speech.audio.done` events
 * (`sse`). A refusal before the audio is the usual JSON error; a failure after it started ends
 * the answer early (SSE: an `error` event first). A client that leaves cancels the upstream call.
 */
@Injectable()
@MeteredRelay()
export class SpeechService {
  private readonly logger = new Logger(SpeechService.name);

  constructor(
    private readonly routerRelay: RouterRelay,
    private readonly observer: RequestObserver,
  ) {}

  relay(request: MeteredRequest, body: SpeechBody, reply: FastifyReply): Promise<void> {
    const requestId = String(request.id);
    const sse = (body.stream_format ?? SpeechDefaults.stream_format) === 'sse';
    const payload = { ...callerContext(request), body, heartbeats: true } satisfies SpeechRequest;
    let started = false;
    const start = (contentType: string) => {
      started = true;
      reply.hijack();
      const headers = sse ? SSE_HEADERS : { 'content-type': contentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };
      reply.raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...headers });
      this.observer.streamStarted(request);
    };
    const fail = (problem: HttpError) => {
      if (!started) {
        if (!reply.sent) void reply.status(problem.status).send(errorBody(errorFormatOf(request), problem, requestId));
        return;
      }
      if (sse) reply.raw.end(sseEvent({ type: 'error', error: { message: problem.message, code: problem.code ?? null, request_id: requestId } }));
      // The audio's headers are gone: a cut-off body is how an audio answer says it failed.
      else reply.raw.destroy();
    };
    return new Promise<void>((resolve) => {
      this.routerRelay.open(
        Rpc.inferenceSpeech,
        request,
        reply,
        payload,
        { route: SPEECH_ROUTE },
        {
          frame: (frame: Exclude<SpeechFrame, { kind: 'heartbeat' }>, relay) => {
            switch (frame.kind) {
              case 'json':
                if (!started) {
                  if (frame.retryAfter !== undefined) void reply.header('retry-after', String(frame.retryAfter));
                  void reply.status(frame.status).send(frame.body);
                } else {
                  const body = frame.body as { error?: { message?: string; code?: string } } | null;
                  fail({ status: frame.status, message: body?.error?.message ?? 'The speech failed upstream', code: body?.error?.code });
                }
                return relay.finish();
              case 'start':
                return start(frame.contentType);
              case 'audio': {
                if (!started) start('application/octet-stream');
                if (sse) reply.raw.write(sseEvent({ type: 'speech.audio.delta', audio: frame.data }));
                else reply.raw.write(Buffer.from(frame.data, 'base64'));
                return;
              }
              case 'done':
                if (!started) start('application/octet-stream');
                if (sse) reply.raw.end(sseEvent({ type: 'speech.audio.done', usage: frame.usage }));
                else reply.raw.end();
                return relay.finish();
            }
          },
          ended: (ending, state) => {
            if (ending.kind === 'client-gone') return resolve();
            if (ending.kind === 'answered' && state.frames > 0) {
              // The router's end frame without a `done` (never sent so): whatever came is the answer.
              if (started && !reply.raw.writableEnded) reply.raw.end();
              return resolve();
            }
            if (ending.kind === 'answered') {
              fail({ status: 502, message: 'The inference router ended the request without an answer; quote the request id when reporting it' });
              return resolve();
            }
            if (ending.kind === 'too-large') {
              fail(
                toHttpError(
                  new DomainError(ErrorCode.InvalidRequest, "input is too large to forward in one request (the NATS server's max_payload)", 'input'),
                )!,
              );
              return resolve();
            }
            const problem = toHttpError(ending.error) ?? { status: 500, message: 'Internal error; quote the request id when reporting it' };
            if (problem.status >= 500) this.logger.error(`speech ${requestId} failed: ${JSON.stringify(ending.error)}`);
            fail(problem);
            resolve();
          },
        },
      );
    });
  }
}
