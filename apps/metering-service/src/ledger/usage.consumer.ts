import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BudgetStore, priceUsage, Settlement, toNano, windowBucket, windowKey } from '@gateway/billing';
import { Prisma } from '@gateway/db';
import { ModelCatalog } from '@gateway/catalog';
import {
  BudgetWindowSpec,
  parseDevPassWindows,
  Plan,
  printable,
  UsageDeadLetter,
  UsageDeadReason,
  UsageDeadStream,
  usageEventProblem,
  UsageRecordedEvent,
  UsageStream,
} from '@gateway/contracts';
import {
  context,
  extractNatsTraceContext,
  JetStreamPublishError,
  GatewayMetrics,
  gatewayTracer,
  GracefulShutdown,
  isDependencyUnavailable,
  JetStreamConnection,
  Metrics,
  recordSpanError,
  RedisConnection,
  type Span,
  SpanKind,
  trace,
  USAGE_DEAD_STREAM,
} from '@gateway/platform';
import type { Counter } from 'prom-client';
import { AckPolicy, ConsumerMessages, DeliverPolicy, JetStreamManager, JsMsg } from 'nats';
import { classifyLedgerError, LedgerFailure, sqlState } from './ledger-errors';
import { LedgerRepository, PricedUsage, VoidedCharge } from './ledger.repository';
import { MeteringEnv } from '../metering.env';

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const RETRY_DELAY_MS = 2_000;
/** While the database is unavailable, a batch is tried again after 250 ms, growing to this. */
const MAX_HOLD_DELAY_MS = 5_000;
/** How long settlements are tried again while Redis is unavailable (longer than a failover takes). */
const SETTLE_HOLD_MS = 30_000;
/** At most this many events are written in one statement. */
const BATCH_SIZE = 256;
/** Batches written at once by one replica (one in PostgreSQL while the next is priced, settled, acknowledged). */
const PARALLEL_BATCHES = 4;
const SPAN_NAME = `${UsageStream.recordedSubject} process`;
/** How long each pull request waits on the consumer's leader before the next one is sent. */
const PULL_EXPIRES_MS = 5_000;

/**
 * The durable JetStream consumer every metering replica pulls from. A message is acknowledged only
 * after the ledger statement that wrote its batch committed, and the ledger's unique request id
 * makes a redelivery harmless. No event can stall it (the consumer's unacknowledged window is
 * finite, and one it fills stops every account's billing):
 * - an event that can never be recorded (not JSON, invalid, text PostgreSQL cannot store, or data
 *   PostgreSQL refuses) is set aside at once: published to the `USAGE_DEAD` stream with its reason
 *   and, once that publish is acknowledged, terminated in `USAGE`;
 * - any other failure of an event is redelivered later (nak with delay), and set aside the same way
 *   on its `maxDeliveries`th delivery;
 * - while the database itself is unavailable, nothing is set aside and no delivery is spent: a
 *   batch is held and written again until the database is back, its messages kept from redelivery.
 * On shutdown it stops pulling and finishes the writes in progress before the database connection closes.
 */
@Injectable()
export class UsageConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(UsageConsumer.name);
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private stopping = false;
  private manager?: JetStreamManager;
  private readonly budget: BudgetStore;

  /** The token windows each plan gives its DevPass keys. */
  private readonly devPassWindows: Record<Plan, BudgetWindowSpec[]>;
  private readonly ledgerWrites: Counter<'result'>;
  private readonly deadLettered: Counter<'reason'>;
  /**
   * Messages received and not yet acknowledged, given back or set aside: kept from redelivery (so
   * no delivery is spent while they wait for a lane or the database); the ack wait is for a replica that died.
   */
  private readonly inProgress = new Set<JsMsg>();
  private keepAlive?: NodeJS.Timeout;
  private lastHoldLog = 0;

  constructor(
    private readonly connection: JetStreamConnection,
    private readonly ledger: LedgerRepository,
    private readonly catalog: ModelCatalog,
    redis: RedisConnection,
    metrics: GatewayMetrics,
    shutdown: GracefulShutdown,
    @Inject(MeteringEnv)
    private readonly env: Pick<MeteringEnv, 'METERING_ACK_WAIT_MS' | 'METERING_BATCH_LINGER_MS' | 'METERING_MAX_DELIVERIES' | 'DEVPASS_TOKEN_WINDOWS'>,
  ) {
    const devPass = parseDevPassWindows(env.DEVPASS_TOKEN_WINDOWS ?? '');
    if ('problem' in devPass) throw new Error(`DEVPASS_TOKEN_WINDOWS: ${devPass.problem}`);
    this.devPassWindows = devPass.windows;
    this.budget = new BudgetStore(redis.client);
    this.ledgerWrites = metrics.counter(Metrics.ledgerWrites);
    this.deadLettered = metrics.counter(Metrics.usageEventsDeadLettered);
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
    await this.connection.ensureStream(USAGE_DEAD_STREAM);
    const config = {
      durable_name: UsageStream.meteringConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: this.env.METERING_ACK_WAIT_MS * 1_000_000,
      max_ack_pending: 1000,
    };
    await manager.consumers.add(UsageStream.name, config).catch(async (error: Error) => {
      // It exists already (another replica, an earlier run): bring its settings up to date.
      await manager.consumers
        .update(UsageStream.name, UsageStream.meteringConsumer, { ack_wait: config.ack_wait, max_ack_pending: config.max_ack_pending })
        .catch(() => Promise.reject(error));
    });
    const consumer = await this.connection.jetstream.consumers.get(UsageStream.name, UsageStream.meteringConsumer);
    // A pull request lives on the consumer's leader: when that NATS server dies (a cluster elects
    // another), nats.js notices by two missed heartbeats (half the expiry each) and pulls again, so
    // a 5 s expiry bounds the pause to seconds rather than the default 30.
    this.messages = await consumer.consume({ max_messages: 256, expires: PULL_EXPIRES_MS });
    this.keepAlive ??= setInterval(() => this.keepInProgressAlive(), Math.max(250, Math.floor(this.env.METERING_ACK_WAIT_MS / 3)));
    this.loop = this.run(this.messages).then(() => this.restartUnlessStopped());
  }

  /** Tells JetStream the messages here are in progress, so it does not redeliver them (which would spend a delivery). */
  private keepInProgressAlive(): void {
    for (const message of this.inProgress) {
      try {
        message.working();
      } catch {
        // The connection is down: JetStream redelivers after the ack wait, harmlessly.
      }
    }
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
    clearInterval(this.keepAlive);
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
          this.inProgress.add(message);
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
      if (queue.length < BATCH_SIZE && this.env.METERING_BATCH_LINGER_MS > 0) {
        // A small batch waits up to lingerMs for more (at low rates one statement per event costs
        // several times its share of one per batch); a full batch or the end goes at once.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.env.METERING_BATCH_LINGER_MS);
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
      const batch = queue.splice(0, BATCH_SIZE);
      const handled: Promise<void> = this.handleBatch(batch)
        .catch((error: Error) => this.logger.error(`a batch of usage events was not handled: ${error.message}`))
        .finally(() => {
          for (const message of batch) this.inProgress.delete(message);
          inFlight.delete(handled);
        });
      inFlight.add(handled);
      if (inFlight.size >= PARALLEL_BATCHES) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    await pump;
  }

  /**
   * Validates and prices a batch, sets aside the events that can never be recorded, and writes the
   * rest in one statement; settles their reservations in one Redis round trip, then acknowledges
   * every message. If the batch cannot be written, each event is written alone, so a poison event
   * is dealt with on its own without holding back the others.
   */
  private async handleBatch(messages: JsMsg[]): Promise<void> {
    // Each event keeps its own consumer span, continuing the trace of the request it is about.
    const items: BatchItem[] = [];
    const setAside: Promise<void>[] = [];
    for (const message of messages) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(decoder.decode(message.data));
      } catch (error) {
        setAside.push(this.deadLetter(message, undefined, 'not_json', 'not_json', `not JSON: ${(error as Error).message}`));
        continue;
      }
      const problem = usageEventProblem(decoded);
      if (problem) {
        const reason = problem.unstorableText ? 'unstorable_text' : 'invalid_event';
        setAside.push(this.deadLetter(message, decoded, reason, problem.field, problem.message));
        continue;
      }
      const event = decoded as UsageRecordedEvent;
      const span = gatewayTracer().startSpan(SPAN_NAME, { kind: SpanKind.CONSUMER }, extractNatsTraceContext(message.headers));
      try {
        if (event.voids) {
          // The edge's void: charged nothing itself, and takes back what the router's event charged.
          items.push({ message, event, credits: new Prisma.Decimal(0), span });
          continue;
        }
        const { credits, known, inconsistent } = priceUsage(this.catalog, event);
        if (!known) this.warn(span, `usage ${event.requestId}: model ${printable(event.model)} is not in the catalog; charged 0`);
        if (inconsistent) this.warn(span, `usage ${event.requestId}: more cache tokens than input tokens; uncached input charged 0`);
        items.push({ message, event, credits, span });
      } catch (error) {
        setAside.push(this.failed({ message, event, span }, error as Error, 'other'));
      }
    }
    if (items.length > 0) await this.writeOrSplit(items);
    await Promise.all(setAside);
  }

  private async writeOrSplit(items: BatchItem[]): Promise<void> {
    try {
      await this.writeHolding(items);
    } catch (error) {
      if (items.length === 1) {
        await this.failed(items[0], error as Error);
        return;
      }
      this.logger.warn(`a batch of ${items.length} usage events was not recorded (${printable((error as Error).message)}); writing them one by one`);
      await Promise.all(items.map((item) => this.writeHolding([item]).catch((failure: Error) => this.failed(item, failure))));
    }
  }

  /**
   * Writes the items, and while the database is unavailable (not the events' fault) tries again,
   * with backoff, for as long as it takes, keeping the messages from redelivery meanwhile: an outage
   * never spends an event's deliveries. Throws any other failure (and on shutdown).
   */
  private async writeHolding(items: BatchItem[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.write(items);
        return;
      } catch (error) {
        if (this.stopping || (await this.failureOf(error)) !== 'unavailable') throw error;
        if (Date.now() - this.lastHoldLog > 10_000) {
          this.lastHoldLog = Date.now();
          this.logger.warn(`the ledger is unavailable; holding usage events until it is back: ${printable((error as Error).message)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, MAX_HOLD_DELAY_MS)));
      }
    }
  }

  /** An error of unknown kind counts as the database's while PostgreSQL does not answer at all. */
  private async failureOf(error: unknown): Promise<LedgerFailure> {
    const failure = classifyLedgerError(error);
    if (failure !== 'other') return failure;
    return (await this.ledger.isReachable()) ? 'other' : 'unavailable';
  }

  /**
   * Records the priced events, takes back the charges of requests the edge voided, settles their
   * reservations, acknowledges them. Throws when nothing was written. A void recorded first stands
   * in the ledger as the request's entry (an error of 0 credits), so the router's event coming after
   * it is a duplicate, charged nothing; a void coming after a charge takes it back.
   */
  private async write(items: BatchItem[]): Promise<void> {
    const written = await this.ledger.recordBatch(items);
    const voided = await this.ledger.voidCharges(
      items.flatMap(({ event }, index) => (event.voids && written[index].state === 'duplicate' ? [event.requestId] : [])),
    );
    let recorded = 0;
    for (const result of written) if (result.state === 'recorded') recorded++;
    if (recorded > 0) this.ledgerWrites.inc({ result: 'written' }, recorded);
    if (recorded < written.length) this.ledgerWrites.inc({ result: 'duplicate' }, written.length - recorded);
    // A duplicate was charged when first recorded; if that delivery died before settling, its
    // reservation is still open and settles now (settling is once per reservation).
    const settlements: Settlement[] = items.map(({ event }, index) =>
      event.keyType === 'dev'
        ? this.tokenSettlement(event, written[index].plan)
        : {
            accountId: event.accountId,
            requestId: event.requestId,
            costNano: event.voids ? 0 : toNano(written[index].credits.toFixed()),
            // Without a window (nothing charged) only the key's reservation is dropped.
            proxy: event.keyType === 'proxy' ? { keyId: event.keyId, windowId: written[index].windowId ?? 'none', windows: written[index].windows } : undefined,
          },
    );
    const settled = await this.settleHolding(settlements);
    await this.forgetFigures(voided);
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

  /**
   * Settles in Redis, and while Redis is unavailable (a failover: a master dying and a replica
   * promoted) tries the failed ones again, with backoff, for up to SETTLE_HOLD_MS, the messages kept
   * from redelivery meanwhile: a failover then leaves no reservation open. Past that (a longer
   * outage) the reservation is left to lapse after its TTL; the ledger is written already. Resolves
   * with the error of each settlement that still failed.
   */
  private async settleHolding(settlements: Settlement[]): Promise<(Error | null)[]> {
    const results: (Error | null)[] = await this.budget.settleMany(settlements).catch((error: Error) => settlements.map(() => error));
    const deadline = Date.now() + SETTLE_HOLD_MS;
    for (let attempt = 0; !this.stopping && Date.now() < deadline; attempt++) {
      const pending = results.flatMap((error, index) => (error && isDependencyUnavailable(error) ? [index] : []));
      if (pending.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
      const again = await this.budget.settleMany(pending.map((index) => settlements[index])).catch((error: Error) => pending.map(() => error));
      pending.forEach((index, position) => (results[index] = again[position]));
    }
    return results;
  }

  /**
   * After charges were taken back, the cached figures they had moved are dropped (they are loaded
   * from the ledger on the next request). Until then they are lower than the ledger says: a
   * request may be refused that the ledger would admit, never the other way round.
   */
  /**
   * A DevPass key's request: its tokens (input plus output; none for a void or an error) counted in
   * its plan's token windows, in the buckets of when the edge admitted it. No credits move.
   */
  private tokenSettlement(event: UsageRecordedEvent, plan: Plan | undefined): Settlement {
    const windows = plan ? this.devPassWindows[plan] : [];
    const tokens = event.voids || event.status === 'error' ? 0 : event.inputTokens + event.outputTokens;
    return {
      accountId: event.accountId,
      requestId: event.requestId,
      costNano: tokens,
      devpass: { keyId: event.keyId, windows: windows.map((window) => ({ key: windowKey(window), ...windowBucket(window, event.timestamp * 1000) })) },
    };
  }

  private async forgetFigures(voided: VoidedCharge[]): Promise<void> {
    for (const charge of voided) {
      this.logger.warn(`usage ${charge.requestId}: voided by the edge (the client got an error and no answer); ${charge.credits.toFixed()} credits taken back`);
      await this.budget.forget(charge.accountId, charge.proxy).catch((error: Error) => {
        this.logger.warn(`usage ${charge.requestId}: cached figures not dropped (they expire on their own): ${error.message}`);
      });
    }
  }

  /** Logs in the event's span, so the line carries the request's trace id. */
  private warn(span: Span, line: string, level: 'warn' | 'error' = 'warn'): void {
    context.with(trace.setSpan(context.active(), span), () => this.logger[level](line));
  }

  /**
   * An event that was not recorded: set aside at once when it can never be, or on its
   * `maxDeliveries`th delivery; otherwise redelivered later. An outage that outlasted a shutdown
   * gives the event back at once (another replica holds it).
   */
  private async failed({ event, message, span }: Omit<BatchItem, 'credits'>, error: Error, known?: LedgerFailure): Promise<void> {
    const failure = known ?? (await this.failureOf(error));
    recordSpanError(span, error);
    span.end();
    const deliveries = message.info.deliveryCount;
    const code = sqlState(error) ?? error.name;
    if (failure === 'data') return this.deadLetter(message, event, 'data_error', code, error.message);
    if (failure === 'other' && deliveries >= this.env.METERING_MAX_DELIVERIES) {
      return this.deadLetter(message, event, 'max_deliveries', code, `failed on ${deliveries} deliveries: ${error.message}`);
    }
    this.ledgerWrites.inc({ result: 'failed' });
    this.warn(span, `usage ${printable(event.requestId)} not recorded (delivery ${deliveries}), will retry: ${printable(error.message)}`, 'error');
    try {
      message.nak(failure === 'unavailable' ? 0 : RETRY_DELAY_MS);
    } catch {
      // The connection is gone: the message is redelivered once its ack wait ends.
    }
  }

  /**
   * Sets an event aside: publishes it to the dead-letter stream with its reason and, only once that
   * publish is acknowledged, terminates it in `USAGE`. When the publish fails the event is
   * redelivered later (nak), so it is never lost. The log line escapes every text from the event.
   */
  private async deadLetter(message: JsMsg, event: unknown, reason: UsageDeadReason, code: string, detail: string): Promise<void> {
    const fields = (event ?? {}) as Partial<Record<'requestId' | 'accountId', unknown>>;
    const requestId = typeof fields.requestId === 'string' ? fields.requestId : undefined;
    const accountId = typeof fields.accountId === 'string' ? fields.accountId : undefined;
    const letter: UsageDeadLetter = {
      reason,
      code: printable(code, 64),
      message: printable(detail, 1000),
      deliveries: message.info.deliveryCount,
      streamSequence: message.seq,
      deadLetteredAt: new Date().toISOString(),
      ...(requestId !== undefined ? { requestId } : {}),
      ...(accountId !== undefined ? { accountId } : {}),
      payload: Buffer.from(message.data).toString('base64'),
    };
    const data = encoder.encode(JSON.stringify(letter));
    // The USAGE sequence as message id: a dead letter published again (its term lost) is stored once.
    const publish = () => this.connection.publisher.publish(UsageDeadStream.subject, data, { msgID: `usage-seq-${message.seq}` });
    const who = `usage event ${requestId === undefined ? `#${message.seq}` : printable(requestId, 80)} (stream sequence ${message.seq})`;
    try {
      await publish().catch(async (error: Error) => {
        // No stream listens (a NATS server back without its store): create it and try once more.
        if (!(error instanceof JetStreamPublishError && error.code === '503')) throw error;
        await this.connection.ensureStream(USAGE_DEAD_STREAM);
        return publish();
      });
    } catch (error) {
      this.ledgerWrites.inc({ result: 'failed' });
      this.logger.error(`${who} could not be set aside (${printable((error as Error).message)}); will retry`);
      try {
        message.nak(RETRY_DELAY_MS);
      } catch {
        // redelivered after the ack wait
      }
      return;
    }
    try {
      // Without a reason: `+TERM <reason>` needs nats-server 2.10, and 2.9 ignores it.
      message.term();
    } catch {
      // Redelivered after the ack wait and set aside again: the dead letter's message id keeps one copy.
    }
    this.deadLettered.inc({ reason });
    this.logger.error(`${who} set aside in ${UsageDeadStream.name}: ${reason} (${letter.code}) after ${letter.deliveries} deliveries: ${letter.message}`);
  }
}

interface BatchItem extends PricedUsage {
  message: JsMsg;
  span: Span;
}
