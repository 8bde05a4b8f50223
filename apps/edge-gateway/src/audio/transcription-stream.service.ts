import { Injectable, Logger } from '@nestjs/common';
import { MediaRoutes, Rpc, TranscriptionBody, TranscriptionFrame, TranscriptionRequest } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MeteredRequest } from '../admission/admission.guard';
import { callerContext } from '../auth/caller-context';
import { RouterRelay } from '../nats/router-relay';
import { ClientBacklog } from '../nats/client-backlog';
import { SSE_HEADERS, sseErrorEvent, StreamedAnswer } from '../nats/streamed-answer';
import { RequestObserver } from '../observability/request-observer';
import { MeteredRelay } from '../policy/metering.decorators';

/**
 * A transcription with `stream: true`: relayed on `inference.transcription-stream` and written as
 * the router's frames arrive — each upstream event (`transcript.text.delta`, then
 * `transcript.text.done` with the usage billed) one `data:` line, sent as soon as it comes. A
 * refusal before the first event is the usual JSON error; a failure after it ends the stream with
 * an `error` event. A client that leaves cancels the upstream call.
 */
@Injectable()
@MeteredRelay()
export class TranscriptionStreamService {
  private readonly logger = new Logger(TranscriptionStreamService.name);

  constructor(
    private readonly routerRelay: RouterRelay,
    private readonly observer: RequestObserver,
    private readonly backlog: ClientBacklog,
  ) {}

  relay(request: MeteredRequest, body: TranscriptionBody, reply: FastifyReply): Promise<void> {
    const requestId = String(request.id);
    const payload = { ...callerContext(request), body, heartbeats: true } satisfies TranscriptionRequest;
    const answer = new StreamedAnswer(request, reply, this.observer, this.backlog, this.logger, 'transcription', (problem) =>
      reply.raw.end(sseErrorEvent(problem, requestId)),
    );
    return new Promise<void>((resolve) => {
      this.routerRelay.open(
        Rpc.inferenceTranscriptionStream,
        request,
        reply,
        payload,
        { route: MediaRoutes.transcriptions },
        {
          frame: (frame: Exclude<TranscriptionFrame, { kind: 'heartbeat' }>, relay) => {
            switch (frame.kind) {
              case 'json':
                answer.errorFrame(frame);
                return relay.finish();
              case 'start':
                return answer.start(SSE_HEADERS);
              case 'event':
                if (!answer.hasStarted) answer.start(SSE_HEADERS);
                answer.write(`data: ${frame.data}\n\n`);
                return;
            }
          },
          // The router completes after the last event (`transcript.text.done`): the stream is then whole.
          ended: (ending, state) => {
            answer.ended(ending, state, 'file');
            resolve();
          },
        },
      );
    });
  }
}
