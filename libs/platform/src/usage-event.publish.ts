import { Logger } from '@nestjs/common';
import { UsageRecordedEvent, UsageStream } from '@gateway/contracts';
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
 * Publishes one usage event to JetStream with the request id as message id: the stream drops a
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
      await target.publish(UsageStream.recordedSubject, codec.encode(event), { msgID: event.requestId, headers: traceHeaders() });
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
