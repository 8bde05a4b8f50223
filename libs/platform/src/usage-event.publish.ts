import { Logger } from '@nestjs/common';
import { UsageRecordedEvent, usageMessageId, UsageStream } from '@gateway/contracts';
import { JSONCodec, type MsgHdrs } from 'nats';
import { traceHeaders } from './observability/tracing';

const codec = JSONCodec<UsageRecordedEvent>();

/** nats.js's JetStream client, or JetStreamConnection's lighter `publisher`: a publish that resolves on the stream's ack. */
export interface UsageEventTarget {
  publish(subject: string, data: Uint8Array, options: { msgID: string; headers?: MsgHdrs }): Promise<unknown>;
}

/** Waits between attempts; the last one repeats for a publish held until acknowledged. */
const RETRY_DELAYS_MS = [100, 500, 2000, 5000];

export interface PublishUsageOptions {
  /**
   * Keep retrying (every 5 s after the first few) until JetStream acknowledges the event, or until
   * `stop` aborts (a process shutting down). Without it: throws after the fourth retry (~8 s).
   */
  untilAcknowledged?: boolean;
  stop?: AbortSignal;
}

/**
 * Publishes one usage event to JetStream with the request id as message id (a void: its own, see
 * `usageMessageId`): the stream drops a
 * duplicate publish (and the ledger a duplicate request id), so retrying after an unclear failure —
 * or a job run twice after a crash — cannot double-charge. `jetstream` may be a function that gives
 * the target: read at each attempt, so a connection not made yet is one more failed attempt
 * (retried, logged), never an error that escapes the retries. Every failure past the first few is
 * logged with the request id; an event given up on throws.
 */
export async function publishUsageEvent(
  jetstream: UsageEventTarget | (() => UsageEventTarget),
  event: UsageRecordedEvent,
  logger: Pick<Logger, 'error'>,
  options: PublishUsageOptions = {},
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const target = typeof jetstream === 'function' ? jetstream() : jetstream;
      // The trace context travels with the event: metering's ledger write joins the request's trace.
      await target.publish(UsageStream.recordedSubject, codec.encode(event), { msgID: usageMessageId(event), headers: traceHeaders() });
      if (attempt >= RETRY_DELAYS_MS.length) logger.error(`usage event ${event.requestId} published after ${attempt + 1} attempts`);
      return;
    } catch (error) {
      const exhausted = attempt >= RETRY_DELAYS_MS.length;
      if (exhausted && (!options.untilAcknowledged || options.stop?.aborted)) {
        logger.error(`usage event ${event.requestId} could not be published: ${(error as Error).message}`);
        throw error;
      }
      // Held: said once when the quick retries are spent, then once a minute.
      if (exhausted && (attempt - RETRY_DELAYS_MS.length) % 12 === 0) {
        logger.error(`usage event ${event.requestId} not yet published (held, retrying every 5 s): ${(error as Error).message}`);
      }
      await delay(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)], options.stop);
    }
  }
}

function delay(ms: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop?.removeEventListener('abort', done);
      resolve();
    }
    stop?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Usage events being published, each held (retried) until JetStream acknowledges it; a process
 * shutting down waits for them up to a bound, then gives each a last attempt and logs those it
 * loses (by request id). Sending never throws.
 */
export class UsageOutbox {
  private readonly pending = new Set<Promise<void>>();
  /** Aborted when a shutdown has waited long enough. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly target: () => UsageEventTarget,
    private readonly logger: Pick<Logger, 'error'>,
  ) {}

  /** Publishes `event` once `after` settles (at once without it); resolves when acknowledged or given up. */
  send(event: UsageRecordedEvent, after?: Promise<unknown>, publish = (held: UsageRecordedEvent) => this.publish(held)): Promise<void> {
    const published: Promise<void> = (after ?? Promise.resolve())
      .then(() => publish(event))
      .catch(() => undefined)
      .finally(() => this.pending.delete(published));
    this.pending.add(published);
    return published;
  }

  /** One event, retried until acknowledged or until a shutdown stops waiting. */
  publish(event: UsageRecordedEvent): Promise<void> {
    return publishUsageEvent(this.target, event, this.logger, { untilAcknowledged: true, stop: this.stopping.signal });
  }

  /** Events not yet acknowledged. */
  get size(): number {
    return this.pending.size;
  }

  /** Waits for every held event, up to `waitMs`; past it each gets a last attempt and is logged if lost. */
  async drain(waitMs: number): Promise<void> {
    const timer = setTimeout(() => this.stopping.abort(), waitMs);
    await Promise.all(this.pending);
    clearTimeout(timer);
  }
}
