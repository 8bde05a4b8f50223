import { UsageRecordedEvent } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import { MeteredCalls } from '../metering/metered-calls';
import { UsagePublisher } from '../usage/usage.publisher';

/** For unit tests: the real publisher over a JetStream stand-in that keeps what was published. */
export function recordingPublisher(events: UsageRecordedEvent[] = []): UsagePublisher {
  const connection = {
    publisher: {
      publish: async (_subject: string, data: Uint8Array) => {
        events.push(JSON.parse(new TextDecoder().decode(data)) as UsageRecordedEvent);
      },
    },
  };
  const publisher = new UsagePublisher(connection as unknown as JetStreamConnection);
  // Published as the call settles, so a test sees the event once the call has returned.
  publisher.publishAfterReply = false;
  return publisher;
}

/** For unit tests: the metered-call lifecycle over `recordingPublisher`. */
export function recordingCalls(events: UsageRecordedEvent[] = []): MeteredCalls {
  return new MeteredCalls(recordingPublisher(events));
}
