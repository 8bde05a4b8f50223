import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { CallerContext, UsageRecordedEvent, usageEvent } from '@gateway/contracts';
import { JetStreamConnection, UsageOutbox } from '@gateway/platform';

/** How long a replica shutting down waits for its held usage events before it gives up on them (logged by id). */
export const SHUTDOWN_PUBLISH_WAIT_MS = 15_000;

/**
 * Publishes the one usage event of each request to JetStream, with the request id as message id:
 * the stream drops a duplicate publish, so retrying after an unclear failure cannot double-charge.
 * An event JetStream does not take (NATS down, the connection not made yet) is held and retried
 * until it is acknowledged; only a replica that stops with events still held loses them, and says
 * which (their request ids, logged as errors).
 */
@Injectable()
export class UsagePublisher implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsagePublisher.name);
  /** Publishes not yet acknowledged: a replica shutting down sends them before its connection closes. */
  private readonly outbox: UsageOutbox;
  /** The events of those publishes, by request id (what `abandon` changes before the next attempt). */
  private readonly unacknowledged = new Map<string, UsageRecordedEvent>();

  /** Events wait for the event loop's next turn (the reply goes first); unit tests that read events at once turn it off. */
  publishAfterReply = true;

  constructor(private readonly jetstream: JetStreamConnection) {
    // The publisher is read at each attempt: before the connection is made, an attempt fails and is retried.
    this.outbox = new UsageOutbox(() => this.jetstream.publisher, this.logger);
  }

  /**
   * The request's one usage event, for the caller the edge authenticated; held until JetStream
   * acknowledges it, never thrown. Published on the next turn of the event loop, after the reply: the frames the request's
   * handler has published by then (its answer, its end marker) are written to NATS first, so the
   * client does not wait for the usage event. Pending (and shutdown waits for it) from this call
   * until JetStream acknowledges it.
   */
  record(
    caller: CallerContext,
    usage: Pick<
      UsageRecordedEvent,
      | 'model'
      | 'route'
      | 'inputTokens'
      | 'outputTokens'
      | 'cacheReadTokens'
      | 'cacheWriteTokens'
      | 'units'
      | 'audioMs'
      | 'characters'
      | 'status'
      | 'provider'
      | 'upstreamRoute'
    >,
  ): Promise<void> {
    const event = usageEvent(caller, usage);
    const nextTurn = this.publishAfterReply ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined;
    this.unacknowledged.set(event.requestId, event);
    return this.outbox
      .send(event, nextTurn, (held) => this.publish(held))
      .finally(() => {
        if (this.unacknowledged.get(event.requestId) === event) this.unacknowledged.delete(event.requestId);
      });
  }

  /**
   * The edge answered the client with an error before any answer reached it (its NATS server went
   * away while the request was on its way), and this replica finished the request but JetStream has
   * not taken its usage event yet (this replica's server went away too): the event is sent as
   * `error`, charged nothing, as a request abandoned in flight is. True when one was changed. An
   * earlier attempt JetStream stored without its acknowledgement reaching here still counts (the
   * stream keeps the first of a message id).
   */
  abandon(requestId: string): boolean {
    const event = this.unacknowledged.get(requestId);
    if (!event || event.status === 'error') return false;
    (event as { status: UsageRecordedEvent['status'] }).status = 'error';
    this.logger.warn(`usage event ${requestId}: the edge answered the client with an error; recorded as error (charged nothing)`);
    return true;
  }

  /** Usage events not yet acknowledged by JetStream. */
  get pendingCount(): number {
    return this.outbox.size;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.outbox.drain(SHUTDOWN_PUBLISH_WAIT_MS);
  }

  publish(event: UsageRecordedEvent): Promise<void> {
    return this.outbox.publish(event);
  }
}
