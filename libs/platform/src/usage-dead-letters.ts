import { printable, storableJson, UsageDeadLetter, UsageDeadStream, usageEventProblem, UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import { type NatsConnection, RetentionPolicy, StorageType } from 'nats';
import { AckedPublisher } from './jetstream.connection';
import type { StreamDefinition } from './jetstream-streams';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The dead-letter stream: file storage, no limits (kept until replayed); ensured by metering (`JetStreamConnection.ensureStream`). */
export const USAGE_DEAD_STREAM: StreamDefinition = {
  name: UsageDeadStream.name,
  subjects: [...UsageDeadStream.subjects],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  duplicate_window: 2 * 60 * 1_000_000_000,
};

/** A dead letter as the stream holds it, with its own sequence number in `USAGE_DEAD`. */
export interface StoredDeadLetter extends UsageDeadLetter {
  seq: number;
}

export type ReplayOutcome =
  | { seq: number; requestId: string; outcome: 'republished'; usageSequence: number; sanitized: boolean }
  | { seq: number; requestId?: string; outcome: 'skipped'; why: string };

/**
 * The operators' side of the dead-letter stream: list what metering set aside, and replay it into
 * `USAGE`. A replay republishes the event (made storable first with `sanitize`) and removes the dead
 * letter only once `USAGE` acknowledged the copy, so at every moment the event is in one stream or
 * the other. The ledger's unique request id makes a replay of an event recorded meanwhile harmless.
 */
export class UsageDeadLetters {
  private readonly publisher: AckedPublisher;

  constructor(private readonly nats: NatsConnection) {
    this.publisher = new AckedPublisher(nats);
  }

  /** Every dead letter, oldest first (none when the stream does not exist yet). */
  async list(): Promise<StoredDeadLetter[]> {
    const manager = await this.nats.jetstreamManager();
    let count: number;
    try {
      count = (await manager.streams.info(UsageDeadStream.name)).state.messages;
    } catch {
      return [];
    }
    if (count === 0) return [];
    const consumer = await this.nats.jetstream().consumers.get(UsageDeadStream.name);
    const messages = await consumer.consume();
    const letters: StoredDeadLetter[] = [];
    for await (const message of messages) {
      letters.push({ ...parseDeadLetter(message.data), seq: message.seq });
      if (message.info.pending === 0) break;
    }
    await messages.close();
    return letters;
  }

  /**
   * Replays the dead letters given. An event that would be set aside again as it is (not JSON, or
   * invalid after `sanitize`) is skipped and stays. `sanitize` replaces each NUL and lone surrogate
   * in its text with U+FFFD, so an event whose text PostgreSQL cannot store is still recorded (and
   * charged) once.
   */
  async replay(letters: StoredDeadLetter[], { sanitize = false } = {}): Promise<ReplayOutcome[]> {
    const manager = await this.nats.jetstreamManager();
    const outcomes: ReplayOutcome[] = [];
    for (const letter of letters) {
      const skipped = (why: string): ReplayOutcome => ({ seq: letter.seq, requestId: letter.requestId, outcome: 'skipped', why });
      let event: UsageRecordedEvent;
      try {
        event = JSON.parse(decoder.decode(Buffer.from(letter.payload, 'base64'))) as UsageRecordedEvent;
      } catch {
        outcomes.push(skipped('not JSON: it can never be recorded'));
        continue;
      }
      if (sanitize) event = storableJson(event);
      const problem = usageEventProblem(event);
      if (problem) {
        outcomes.push(skipped(problem.unstorableText ? `${problem.message} (replay it with --sanitize)` : problem.message));
        continue;
      }
      // Not the request id as message id: the original, published with it, may still be within the
      // stream's duplicate window, which would drop the copy. The dead letter's own sequence keeps a
      // replay retried after an unclear failure from being stored twice.
      const ack = await this.publisher.publish(UsageStream.recordedSubject, encoder.encode(JSON.stringify(event)), {
        msgID: `${event.requestId}:replay:${letter.seq}`,
      });
      await manager.streams.deleteMessage(UsageDeadStream.name, letter.seq, false).catch((error: Error) => {
        // Already gone (a replay running at the same time): nothing left to remove.
        if (!/not found/i.test(error.message)) throw error;
      });
      outcomes.push({ seq: letter.seq, requestId: event.requestId, outcome: 'republished', usageSequence: ack.seq, sanitized: sanitize });
    }
    return outcomes;
  }
}

/** A dead letter's body; an unreadable one is listed as such rather than hiding the others. */
export function parseDeadLetter(data: Uint8Array): UsageDeadLetter {
  try {
    return JSON.parse(decoder.decode(data)) as UsageDeadLetter;
  } catch {
    return {
      reason: 'not_json',
      code: 'unreadable',
      message: `unreadable dead letter: ${printable(decoder.decode(data), 80)}`,
      deliveries: 0,
      streamSequence: 0,
      deadLetteredAt: '',
      payload: '',
    };
  }
}
