import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import type { Histogram } from 'prom-client';
import { firstValueFrom, timeout } from 'rxjs';

export const NATS_CLIENT = Symbol('NATS_CLIENT');
export const NATS_REQUEST_TIMEOUT_MS = Symbol('NATS_REQUEST_TIMEOUT_MS');

/**
 * Request/reply to the back-end services over NATS. A service's DomainErrorPayload arrives as the
 * rejection and is mapped to a status by the HTTP filter; a timeout becomes 503.
 */
@Injectable()
export class ServiceClient {
  private readonly latency: Histogram<'subject'>;

  constructor(
    @Inject(NATS_CLIENT) private readonly nats: ClientProxy,
    @Inject(NATS_REQUEST_TIMEOUT_MS) private readonly timeoutMs: number,
    metrics: GatewayMetrics,
  ) {
    this.latency = metrics.histogram(Metrics.natsRequestDuration);
  }

  request<T>(subject: string, payload: object): Promise<T> {
    const replied = this.timeRequest(subject);
    return firstValueFrom(this.nats.send<T>(subject, payload).pipe(timeout(this.timeoutMs))).finally(replied);
  }

  /**
   * Starts timing a request on `subject` (one of ours, never client text); the returned function
   * records the time once, when the first reply (or the failure) arrives.
   */
  timeRequest(subject: string): () => void {
    const end = this.latency.startTimer({ subject });
    let recorded = false;
    return () => {
      if (!recorded) end();
      recorded = true;
    };
  }

  async publish(subject: string, payload: object): Promise<void> {
    await firstValueFrom(this.nats.emit(subject, payload), { defaultValue: undefined });
  }
}
