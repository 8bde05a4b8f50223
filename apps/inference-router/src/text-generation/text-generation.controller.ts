import { Handles, RawFrame } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { CancelInferenceEvent, ModelEntry, Rpc, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import { Payload } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { InflightRequests } from './inflight-requests';
import { TextGenerationService } from './text-generation.service';
import { SseBytesFrame, SseBytesHead } from './sse-bytes-frame';
import { UsagePublisher } from '../usage/usage.publisher';
import { ModelCatalog } from '@gateway/catalog';

@Controller()
export class TextGenerationController {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly generation: TextGenerationService,
    private readonly liveness: RouterLiveness,
    private readonly inflight: InflightRequests,
    private readonly usage: UsagePublisher,
  ) {}

  /**
   * The hot path: the request as the transport validated it (its compiled schema; typed so that the
   * DTO pipe leaves it as parsed, no class-transformer), each frame sent as it is emitted. The first
   * stream frame names this replica, for the edge's liveness probes (heartbeats do too). An edge that
   * asked for `rawFrames` gets the stream's events as raw `sse-bytes` frames, those sent in one turn
   * of the event loop joined into one message (`SseBytesFrame`). The frames are shaped as the
   * service emits them, not by an operator: one function call per chunk rather than a subscriber.
   */
  @Handles(Rpc.inferenceText)
  generate(@Payload() request: Readonly<TextGenerationRequest>): Observable<TextFrame | RawFrame> {
    let named = false;
    const raw = request.rawFrames === true;
    return this.generation.generate(request as TextGenerationRequest, (frame) => {
      if (frame.kind !== 'sse') return frame;
      const router = named ? undefined : this.liveness.id;
      named = true;
      if (!raw) return router ? { ...frame, router } : frame;
      // Undefined properties are left out of the head's JSON.
      const head: SseBytesHead = {
        kind: 'sse-bytes',
        events: frame.frames.length,
        inputTokens: frame.inputTokens,
        outputTokens: frame.outputTokens,
        last: frame.last,
        router,
      };
      return new SseBytesFrame(head, frame.frames.join(''));
    });
  }

  /** Heard by every replica (no queue group): the one serving the request aborts its upstream call. */
  @Handles(Rpc.inferenceCancel)
  cancel(@Payload() event: Readonly<CancelInferenceEvent>): void {
    const running = this.inflight.cancel(event.requestId, event.abandoned === true);
    // Finished here, its usage event still held (the answer and the event lost with a NATS server).
    if (!running && event.abandoned === true) this.usage.abandon(event.requestId);
  }

  @Handles(Rpc.inferenceModels)
  models(): ModelEntry[] {
    return this.catalog.list();
  }
}
