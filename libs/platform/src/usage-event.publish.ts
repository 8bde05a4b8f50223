import { Logger } from '@nestjs/common';
import { UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import { JSONCodec, type MsgHdrs } from 'nats';
import { traceHeaders } from './observability/tracing';

const codec = JSONCodec<UsageRecordedEvent>();

/** nats.js's JetStream client, or JetStreamConnection's lighter `publisher`: a publish that resolves on the stream's ack. */
export interface UsageEventTarget {
  publish(subject: string, data: Uint8Array, options: { msgID: string; headers?: MsgHdrs }): Promise<unknown>;
}
const RETRY_DELAYS_MS = [100, 500, 2000, 5000];

/**
 * Publishes one usage event to JetStream with the request id as message id: the stream drops a
 * duplicate publish (and the ledger a duplicate request id), so retrying after an unclear failure —
 * or a job run twice after a crash — cannot double-charge. Throws after the last retry.
 */
export async function publishUsageEvent(jetstream: UsageEventTarget, event: UsageRecordedEvent, logger: Pick<Logger, 'error'>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      // The trace context travels with the event: metering's ledger write joins the request's trace.
      await jetstream.publish(UsageStream.recordedSubject, codec.encode(event), { msgID: event.requestId, headers: traceHeaders() });
      return;
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length) {
        logger.error(`usage event ${event.requestId} could not be published: ${(error as Error).message}`);
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
    }
  }
}
