import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { CancelInferenceEvent, ModelEntry, Rpc, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import { Payload } from '@nestjs/microservices';
import { map, Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { InflightRequests } from './inflight-requests';
import { TextGenerationService } from './text-generation.service';
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
   * stream frame names this replica, for the edge's liveness probes (heartbeats do too).
   */
  @Handles(Rpc.inferenceText)
  generate(@Payload() request: Readonly<TextGenerationRequest>): Observable<TextFrame> {
    let named = false;
    return this.generation.generate(request as TextGenerationRequest).pipe(
      map((frame) => {
        if (named || frame.kind !== 'sse') return frame;
        named = true;
        return { ...frame, router: this.liveness.id };
      }),
    );
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
