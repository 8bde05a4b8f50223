import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import {
  BudgetStore,
  context,
  extractNatsTraceContext,
  GatewayMetrics,
  gatewayTracer,
  GracefulShutdown,
  JetStreamConnection,
  Metrics,
  recordSpanError,
  RedisConnection,
  Settlement,
  type Span,
  SpanKind,
  toNano,
  trace,
} from '@gateway/platform';
import type { Counter } from 'prom-client';
import { AckPolicy, ConsumerMessages, DeliverPolicy, JetStreamManager, JsMsg, JSONCodec } from 'nats';
import { LedgerRepository, PricedUsage } from './ledger.repository';
import { priceUsage } from './pricing';

export const METERING_ACK_WAIT_MS = Symbol('METERING_ACK_WAIT_MS');
export const METERING_BATCH_LINGER_MS = Symbol('METERING_BATCH_LINGER_MS');

const codec = JSONCodec<UsageRecordedEvent>();
const RETRY_DELAY_MS = 2_000;
/** At most this many events are written in one statement. */
const BATCH_SIZE = 256;
/** Batches written at once by one replica (one in PostgreSQL while the next is priced, settled, acknowledged). */
const PARALLEL_BATCHES = 4;
const SPAN_NAME = `${UsageStream.recordedSubject} process`;

/**
 * The durable JetStream consumer every metering replica pulls from. A message is acknowledged only
 * after the ledger statement that wrote its batch committed; a failure is redelivered later (nak
 * with delay), and the ledger's unique request id makes redelivery harmless. On shutdown it stops pulling and finishes
 * the writes in progress before the database connection closes.
 */
@Injectable()
export class UsageConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(UsageConsumer.name);
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private stopping = false;
  private manager?: JetStreamManager;
  private readonly budget: BudgetStore;
  private readonly ledgerWrites: Counter<'result'>;

  constructor(
    private readonly connection: JetStreamConnection,
    private readonly ledger: LedgerRepository,
    private readonly catalog: ModelCatalog,
    @Inject(METERING_ACK_WAIT_MS) private readonly ackWaitMs: number,
    redis: RedisConnection,
    metrics: GatewayMetrics,
    shutdown: GracefulShutdown,
    @Optional() @Inject(METERING_BATCH_LINGER_MS) private readonly lingerMs = 0,
  ) {
    this.budget = new BudgetStore(redis.client);
    this.ledgerWrites = metrics.counter(Metrics.ledgerWrites);
    metrics.gauge(Metrics.meteringPendingEvents, async (gauge) => {
      const info = await this.manager?.consumers.info(UsageStream.name, UsageStream.meteringConsumer).catch(() => undefined);
      if (info) gauge.set(info.num_pending);
    });
    shutdown.onDrain('usage consumer', () => this.stop());
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.start();
  }

  private async start(): Promise<void> {
    const manager = await this.connection.nats.jetstreamManager();
    this.manager = manager;
    const config = {
      durable_name: UsageStream.meteringConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: this.ackWaitMs * 1_000_000,
      max_ack_pending: 1000,
    };
    await manager.consumers.add(UsageStream.name, config).catch(async (error: Error) => {
      // It exists already (another replica, an earlier run): bring its settings up to date.
      await manager.consumers
        .update(UsageStream.name, UsageStream.meteringConsumer, { ack_wait: config.ack_wait, max_ack_pending: config.max_ack_pending })
        .catch(() => Promise.reject(error));
    });
    const consumer = await this.connection.jetstream.consumers.get(UsageStream.name, UsageStream.meteringConsumer);
    this.messages = await consumer.consume({ max_messages: 256 });
    this.loop = this.run(this.messages).then(() => this.restartUnlessStopped());
  }

  /**
   * The consume loop ends on its own when the consumer vanished under it (a NATS server back
   * without its store): the stream and the durable consumer are created again, forever, with backoff.
   */
  private async restartUnlessStopped(): Promise<void> {
    for (let attempt = 0; this.messages && !this.stopping; attempt++) {
      this.logger.warn('usage consumer ended unexpectedly; starting it again');
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5_000)));
      if (this.stopping) return;
      try {
        await this.connection.ensureUsageStream();
        await this.start();
        return;
      } catch (error) {
        this.logger.warn(`usage consumer not restarted yet: ${(error as Error).message}`);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  private async stop(): Promise<void> {
    this.stopping = true;
    const messages = this.messages;
    this.messages = undefined;
    await messages?.close().catch(() => undefined);
    await this.loop;
  }

  /**
   * Takes whatever the consumer has buffered (up to BATCH_SIZE messages, without waiting to fill a
   * batch) and writes it as one batch; up to PARALLEL_BATCHES batches are in flight at once, and
   * row locks taken in one order keep concurrent charges to one account exact.
   */
  private async run(messages: ConsumerMessages): Promise<void> {
    const queue: JsMsg[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const pump = (async () => {
      try {
        for await (const message of messages) {
          queue.push(message);
          wake?.();
        }
      } finally {
        ended = true;
        wake?.();
      }
    })();
    const inFlight = new Set<Promise<void>>();
    for (;;) {
      if (queue.length === 0) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (queue.length < BATCH_SIZE && this.lingerMs > 0) {
        // A small batch waits up to lingerMs for more (at low rates one statement per event costs
        // several times its share of one per batch); a full batch or the end goes at once.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.lingerMs);
          wake = () => {
            if (queue.length < BATCH_SIZE && !ended) return;
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      } else {
        // Let the messages already delivered to this process reach the queue.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const handled: Promise<void> = this.handleBatch(queue.splice(0, BATCH_SIZE))
        .catch((error: Error) => this.logger.error(`a batch of usage events was not handled: ${error.message}`))
        .finally(() => inFlight.delete(handled));
      inFlight.add(handled);
      if (inFlight.size >= PARALLEL_BATCHES) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    await pump;
  }

  /**
   * Prices a batch and writes it in one statement, settles its reservations in one Redis round trip, then
   * acknowledges every message. If the batch cannot be written, each event is written alone, so a
   * poison event is redelivered (nak with delay) without holding back the others.
   */
  private async handleBatch(messages: JsMsg[]): Promise<void> {
    // Each event keeps its own consumer span, continuing the trace of the request it is about.
    const items: BatchItem[] = [];
    for (const message of messages) {
      let event: UsageRecordedEvent;
      try {
        event = codec.decode(message.data);
      } catch {
        this.logger.error(`usage message ${message.seq} is not JSON; discarded`);
        message.term();
        continue;
      }
      const span = gatewayTracer().startSpan(SPAN_NAME, { kind: SpanKind.CONSUMER }, extractNatsTraceContext(message.headers));
      const { credits, known, inconsistent } = priceUsage(this.catalog, event);
      if (!known) this.warn(span, `usage ${event.requestId}: model ${event.model} is not in the catalog; charged 0`);
      if (inconsistent) this.warn(span, `usage ${event.requestId}: more cache tokens than input tokens; uncached input charged 0`);
      items.push({ message, event, credits, span });
    }
    if (items.length === 0) return;
    try {
      await this.write(items);
    } catch (error) {
      if (items.length === 1) {
        this.failed(items[0], error as Error);
        return;
      }
      this.logger.warn(`a batch of ${items.length} usage events was not recorded (${(error as Error).message}); writing them one by one`);
      await Promise.all(items.map((item) => this.write([item]).catch((failure: Error) => this.failed(item, failure))));
    }
  }

  /** Records the priced events, settles their reservations, acknowledges them. Throws when nothing was written. */
  private async write(items: BatchItem[]): Promise<void> {
    const written = await this.ledger.recordBatch(items);
    let recorded = 0;
    for (const result of written) if (result.state === 'recorded') recorded++;
    if (recorded > 0) this.ledgerWrites.inc({ result: 'written' }, recorded);
    if (recorded < written.length) this.ledgerWrites.inc({ result: 'duplicate' }, written.length - recorded);
    // A duplicate was charged when first recorded; if that delivery died before settling, its
    // reservation is still open and settles now (settling is once per reservation).
    const settlements: Settlement[] = items.map(({ event }, index) => ({
      accountId: event.accountId,
      requestId: event.requestId,
      costNano: toNano(written[index].credits.toFixed()),
      // Without a window (nothing charged) only the key's reservation is dropped.
      proxy: event.keyType === 'proxy' ? { keyId: event.keyId, windowId: written[index].windowId ?? 'none' } : undefined,
    }));
    const settled = await this.budget.settleMany(settlements).catch((error: Error) => settlements.map(() => error));
    items.forEach(({ event, message, span }, index) => {
      const error = settled[index];
      if (error) this.warn(span, `usage ${event.requestId}: reservation not settled in Redis: ${error.message}`);
      // Recorded whatever happens to the ack: one lost (connection gone) means a harmless redelivery.
      try {
        message.ack();
      } catch (failure) {
        this.warn(span, `usage ${event.requestId}: recorded, but not acknowledged: ${(failure as Error).message}`);
      }
      span.end();
    });
  }

  /** Logs in the event's span, so the line carries the request's trace id. */
  private warn(span: Span, line: string, level: 'warn' | 'error' = 'warn'): void {
    context.with(trace.setSpan(context.active(), span), () => this.logger[level](line));
  }

  private failed({ event, message, span }: BatchItem, error: Error): void {
    this.ledgerWrites.inc({ result: 'failed' });
    this.warn(span, `usage ${event.requestId} not recorded, will retry: ${error.message}`, 'error');
    recordSpanError(span, error);
    span.end();
    try {
      message.nak(RETRY_DELAY_MS);
    } catch {
      // The connection is gone: the message is redelivered once its ack wait ends.
    }
  }
}

interface BatchItem extends PricedUsage {
  message: JsMsg;
  span: Span;
}
