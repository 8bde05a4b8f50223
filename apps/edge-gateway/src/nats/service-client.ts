import { Inject, Injectable } from '@nestjs/common';
import { EventContract, ReplyOf, RequestContract, RequestOf } from '@gateway/contracts';
import { GatewayMetrics, Metrics, NatsRpcClient } from '@gateway/platform';
import type { Histogram } from 'prom-client';
import { EdgeEnv } from '../config/edge.env';

/**
 * Request/reply to the back-end services over NATS, typed by the `Rpc` table. A service's
 * DomainErrorPayload arrives as the rejection and is mapped to a status by the HTTP filter; a
 * timeout becomes 503.
 */
@Injectable()
export class ServiceClient {
  private readonly latency: Histogram<'subject'>;

  constructor(
    private readonly nats: NatsRpcClient,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'NATS_REQUEST_TIMEOUT_MS'>,
    metrics: GatewayMetrics,
  ) {
    this.latency = metrics.histogram(Metrics.natsRequestDuration);
  }

  request<C extends RequestContract>(contract: C, payload: RequestOf<C>): Promise<ReplyOf<C>> {
    const replied = this.timeRequest(contract.subject);
    return this.nats.request(contract, payload, this.env.NATS_REQUEST_TIMEOUT_MS).finally(replied);
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

  async publish<C extends EventContract>(contract: C, payload: RequestOf<C>): Promise<void> {
    this.nats.emit(contract, payload);
  }
}
