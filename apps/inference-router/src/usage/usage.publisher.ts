import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { CallerContext, UsageRecordedEvent, usageEvent } from '@gateway/contracts';
import { JetStreamConnection, publishUsageEvent } from '@gateway/platform';

/**
 * Publishes the one usage event of each request to JetStream, with the request id as message id:
 * the stream drops a duplicate publish, so retrying after an unclear failure cannot double-charge.
 */
@Injectable()
export class UsagePublisher implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsagePublisher.name);
  /** Publishes not yet acknowledged: a replica shutting down sends them before its connection closes. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly jetstream: JetStreamConnection) {}

  /** The request's one usage event, for the caller the edge authenticated; a failure is logged, never thrown. */
  async record(
    caller: CallerContext,
    usage: Pick<
      UsageRecordedEvent,
      'model' | 'route' | 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'units' | 'status' | 'provider' | 'upstreamRoute'
    >,
  ): Promise<void> {
    const event = usageEvent(caller, usage);
    const published = this.publish(event).catch(() => undefined);
    this.pending.add(published);
    await published;
    this.pending.delete(published);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.pending);
  }

  publish(event: UsageRecordedEvent): Promise<void> {
    return publishUsageEvent(this.jetstream.jetstream, event, this.logger);
  }
}
