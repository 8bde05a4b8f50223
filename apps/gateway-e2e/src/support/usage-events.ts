/**
 * Reads the `USAGE` JetStream stream the way an operator's tool would: an ordered consumer from
 * the start of the stream, collecting every `usage.recorded` event by request id.
 */
import { Subjects, type UsageRecordedEvent } from '@gateway/contracts';
import { connect, type ConsumerMessages, JSONCodec, type NatsConnection } from 'nats';
import { suiteInfo } from './suite-info';

const codec = JSONCodec<UsageRecordedEvent>();

export interface RecordedUsage {
  event: UsageRecordedEvent;
  subject: string;
  /** The JetStream message id (`Nats-Msg-Id` header). */
  msgId: string | undefined;
  seq: number;
}

export class UsageWatcher {
  private readonly byRequest = new Map<string, RecordedUsage[]>();

  private constructor(
    private readonly connection: NatsConnection,
    private readonly messages: ConsumerMessages,
  ) {
    void this.pump();
  }

  static async open(): Promise<UsageWatcher> {
    const connection = await connect({ servers: suiteInfo().env.NATS_URL.split(','), name: 'gateway-e2e-usage' });
    const consumer = await connection.jetstream().consumers.get('USAGE');
    return new UsageWatcher(connection, await consumer.consume());
  }

  private async pump(): Promise<void> {
    for await (const message of this.messages) {
      let event: UsageRecordedEvent;
      try {
        event = codec.decode(message.data);
      } catch {
        continue;
      }
      const recorded = { event, subject: message.subject, msgId: message.headers?.get('Nats-Msg-Id') || undefined, seq: message.seq };
      // Found by the gateway's request id and by the client's own, when it sent one.
      for (const id of new Set([event.requestId, event.clientRequestId])) {
        if (id === undefined) continue;
        const list = this.byRequest.get(id) ?? [];
        list.push(recorded);
        this.byRequest.set(id, list);
      }
    }
  }

  /** Usage events seen so far for a request id (the gateway's or the client's own); the edge's voids apart. */
  eventsFor(requestId: string): RecordedUsage[] {
    return (this.byRequest.get(requestId) ?? []).filter((recorded) => !recorded.event.voids);
  }

  /** The edge's voids of a request seen so far (it answered the client an error with no part of an answer). */
  voidsFor(requestId: string): RecordedUsage[] {
    return (this.byRequest.get(requestId) ?? []).filter((recorded) => recorded.event.voids);
  }

  /**
   * Waits until at least one event for `requestId` arrived, then `settleMs` more so that a
   * duplicate would be seen too, and returns them all (empty after `timeoutMs`).
   */
  async waitFor(requestId: string, { timeoutMs = 10_000, settleMs = 400 } = {}): Promise<RecordedUsage[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.eventsFor(requestId).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (this.eventsFor(requestId).length > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    return this.eventsFor(requestId);
  }

  /** The one event of a request; fails the test when there is none or more than one. */
  async single(requestId: string): Promise<UsageRecordedEvent> {
    const events = await this.waitFor(requestId);
    if (events.length !== 1) {
      throw new Error(`expected exactly one usage event for ${requestId}, got ${events.length}: ${JSON.stringify(events.map((e) => e.event))}`);
    }
    return events[0].event;
  }

  async close(): Promise<void> {
    await this.messages.close();
    await this.connection.close();
  }
}

/**
 * Resolves once the inference router has been sent the text-generation request the client called
 * `clientRequestId` (a plain subscription beside the routers' queue group sees every request), so a
 * test can act on a request known to be in flight rather than after a guessed delay.
 */
export async function whenRouterIsAsked(clientRequestId: string, timeoutMs = 10_000): Promise<{ seen: Promise<void>; close: () => Promise<void> }> {
  const connection = await connect({ servers: suiteInfo().env.NATS_URL.split(','), name: 'gateway-e2e-tap' });
  const payloads = JSONCodec<{ clientRequestId?: string }>();
  const subscription = connection.subscribe(Subjects.inferenceText);
  const seen = (async () => {
    const timer = setTimeout(() => subscription.unsubscribe(), timeoutMs);
    for await (const message of subscription) {
      try {
        if (payloads.decode(message.data).clientRequestId === clientRequestId) {
          clearTimeout(timer);
          return;
        }
      } catch {
        // not JSON: not ours
      }
    }
    throw new Error(`the router was not asked for ${clientRequestId} within ${timeoutMs} ms`);
  })();
  await connection.flush();
  return { seen, close: () => connection.close() };
}
