import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import {
  BudgetStore,
  extractNatsTraceContext,
  GatewayMetrics,
  GracefulShutdown,
  inSpan,
  JetStreamConnection,
  Metrics,
  RedisConnection,
  SpanKind,
  toNano,
} from '@gateway/platform';
import type { Counter } from 'prom-client';
import { AckPolicy, ConsumerMessages, DeliverPolicy, JetStreamManager, JsMsg, JSONCodec } from 'nats';
import { LedgerRepository } from './ledger.repository';
import { priceUsage } from './pricing';

export const METERING_ACK_WAIT_MS = Symbol('METERING_ACK_WAIT_MS');

const codec = JSONCodec<UsageRecordedEvent>();
const RETRY_DELAY_MS = 2_000;
const PARALLEL = 16;

/**
 * The durable JetStream consumer every metering replica pulls from. A message is acknowledged only
 * after its ledger transaction committed; a failure is redelivered later (nak with delay), and the
 * ledger's unique request id makes redelivery harmless. On shutdown it stops pulling and finishes
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
   * Up to PARALLEL events are written at once: each is its own transaction, and row locks on the
   * account and key keep concurrent charges to one account exact.
   */
  private async run(messages: ConsumerMessages): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    for await (const message of messages) {
      const handled = this.handle(message).finally(() => inFlight.delete(handled));
      inFlight.add(handled);
      if (inFlight.size >= PARALLEL) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  }

  /** In a consumer span continuing the trace of the request the event is about. */
  private handle(message: JsMsg): Promise<void> {
    const parent = extractNatsTraceContext(message.headers);
    return inSpan(`${UsageStream.recordedSubject} process`, { kind: SpanKind.CONSUMER, parent }, () => this.record(message));
  }

  private async record(message: JsMsg): Promise<void> {
    let event: UsageRecordedEvent;
    try {
      event = codec.decode(message.data);
    } catch {
      this.logger.error(`usage message ${message.seq} is not JSON; discarded`);
      message.term();
      return;
    }
    try {
      const { credits, known, inconsistent } = priceUsage(this.catalog, event);
      if (!known) this.logger.warn(`usage ${event.requestId}: model ${event.model} is not in the catalog; charged 0`);
      if (inconsistent) this.logger.warn(`usage ${event.requestId}: more cache tokens than input tokens; uncached input charged 0`);
      const written = await this.ledger.record(event, credits);
      this.ledgerWrites.inc({ result: written.state === 'recorded' ? 'written' : 'duplicate' });
      // A duplicate was charged when first recorded; if that delivery died before settling, its
      // reservation is still open and settles now (settling is once per reservation).
      const costNano = toNano(written.credits.toFixed());
      // Without a window (nothing charged) only the key's reservation is dropped.
      const proxy = event.keyType === 'proxy' ? { keyId: event.keyId, windowId: written.windowId ?? 'none' } : undefined;
      await this.budget
        .settle(event.accountId, event.requestId, costNano, proxy)
        .catch((error: Error) => this.logger.warn(`usage ${event.requestId}: reservation not settled in Redis: ${error.message}`));
      message.ack();
    } catch (error) {
      this.ledgerWrites.inc({ result: 'failed' });
      this.logger.error(`usage ${event.requestId} not recorded, will retry: ${(error as Error).message}`);
      message.nak(RETRY_DELAY_MS);
    }
  }
}
