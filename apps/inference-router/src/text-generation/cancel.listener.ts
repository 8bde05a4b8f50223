import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CancelInferenceEvent, Subjects } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import { JSONCodec, Subscription } from 'nats';
import { InflightRequests } from './inflight-requests';

/** The edge publishes the event itself; an older edge sent it through Nest's client, wrapped as `{pattern, data}`. */
const codec = JSONCodec<Partial<CancelInferenceEvent> & { data?: CancelInferenceEvent }>();

/**
 * `inference.cancel` is heard by every router replica (a plain subscription, no queue group); the
 * replica serving the request aborts its upstream call.
 */
@Injectable()
export class CancelListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private subscription?: Subscription;

  constructor(
    private readonly connection: JetStreamConnection,
    private readonly inflight: InflightRequests,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.connection.nats.subscribe(Subjects.inferenceCancel, {
      callback: (error, message) => {
        if (error) return;
        try {
          const event = codec.decode(message.data);
          const requestId = event.requestId ?? event.data?.requestId;
          if (typeof requestId === 'string') this.inflight.cancel(requestId, event.abandoned === true);
        } catch {
          // not a cancel event: ignore
        }
      },
    });
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }
}
