import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CancelInferenceEvent, Subjects } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import { JSONCodec, Subscription } from 'nats';
import { InflightRequests } from './inflight-requests';

/** Published with the Nest NATS client, which wraps the payload as `{pattern, data}`. */
const codec = JSONCodec<{ data?: CancelInferenceEvent }>();

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
          const requestId = codec.decode(message.data).data?.requestId;
          if (typeof requestId === 'string') this.inflight.cancel(requestId);
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
