import { Injectable, Logger } from '@nestjs/common';
import { CallerContext, UsageRecordedEvent, UsageStatus, VIDEO_ROUTE } from '@gateway/contracts';
import { JetStreamConnection, publishUsageEvent } from '@gateway/platform';

/**
 * The one usage event of a video job, keyed by the job's request id: a job run again after a
 * crash publishes the same id, which JetStream and the ledger both drop.
 */
@Injectable()
export class VideoUsagePublisher {
  private readonly logger = new Logger(VideoUsagePublisher.name);

  constructor(private readonly connection: JetStreamConnection) {}

  /** Throws when JetStream cannot take it after retries. */
  record(caller: CallerContext, usage: { model: string; status: UsageStatus; units: number; provider?: string; upstreamRoute?: string }): Promise<void> {
    const event: UsageRecordedEvent = {
      requestId: caller.requestId,
      ...(caller.clientRequestId ? { clientRequestId: caller.clientRequestId } : {}),
      accountId: caller.accountId,
      keyId: caller.keyId,
      keyType: caller.keyType,
      maskedKey: caller.maskedKey,
      ip: caller.ip,
      model: usage.model,
      route: VIDEO_ROUTE,
      inputTokens: 0,
      outputTokens: 0,
      units: usage.units,
      status: usage.status,
      timestamp: Math.floor(Date.now() / 1000),
      provider: usage.provider,
      upstreamRoute: usage.upstreamRoute,
    };
    return publishUsageEvent(this.connection.jetstream, event, this.logger);
  }
}
