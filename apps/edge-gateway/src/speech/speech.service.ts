import { Injectable, Logger } from '@nestjs/common';
import { Rpc, SPEECH_ROUTE, SpeechBody, SpeechDefaults, SpeechFrame, SpeechRequest } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MeteredRequest } from '../admission/admission.guard';
import { callerContext } from '../auth/caller-context';
import { RouterRelay } from '../nats/router-relay';
import { ClientBacklog } from '../nats/client-backlog';
import { SSE_HEADERS, sseErrorEvent, StreamedAnswer } from '../nats/streamed-answer';
import { RequestObserver } from '../observability/request-observer';
import { MeteredRelay } from '../policy/metering.decorators';

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
    private readonly backlog: ClientBacklog,
  ) {}

  relay(request: MeteredRequest, body: SpeechBody, reply: FastifyReply): Promise<void> {
    const requestId = String(request.id);
    const sse = (body.stream_format ?? SpeechDefaults.stream_format) === 'sse';
    const payload = { ...callerContext(request), body, heartbeats: true } satisfies SpeechRequest;
    // The audio's headers are gone: a cut-off body is how an audio answer says it failed.
    const answer = new StreamedAnswer(request, reply, this.observer, this.backlog, this.logger, 'speech', (problem) =>
      sse ? reply.raw.end(sseErrorEvent(problem, requestId)) : reply.raw.destroy(),
    );
    const start = (contentType: string) =>
      answer.start(sse ? SSE_HEADERS : { 'content-type': contentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
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
                answer.errorFrame(frame);
                return relay.finish();
              case 'start':
                return start(frame.contentType);
              case 'audio': {
                if (!answer.hasStarted) start('application/octet-stream');
                answer.write(sse ? sseEvent({ type: 'speech.audio.delta', audio: frame.data }) : Buffer.from(frame.data, 'base64'));
                return;
              }
              case 'done':
                if (!answer.hasStarted) start('application/octet-stream');
                if (sse) reply.raw.end(sseEvent({ type: 'speech.audio.done', usage: frame.usage }));
                else reply.raw.end();
                return relay.finish();
            }
          },
          ended: (ending, state) => {
            answer.ended(ending, state, 'input');
            resolve();
          },
        },
      );
    });
  }
}
