import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { BudgetStore, RestoredReservation } from '@gateway/billing';
import { JetStreamConnection, RedisConnection } from '@gateway/platform';
import { EdgeEnv } from '../config/edge.env';

export type RecoveryStorePort = Pick<BudgetStore, 'generation' | 'warm' | 'restore'>;
export type UsageProgressPort = Pick<JetStreamConnection, 'lastUsageSequence' | 'meteringCaughtUp'>;
export type FailoverPort = Pick<RedisConnection, 'onFailover'>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
const CATCH_UP_POLL_MS = 200;

/**
 * Rebuilds trust in Redis's budget figures after Redis lost its state (restarted empty, flushed).
 *
 * Redis holds, besides the cached balances and key spend (which are primed again from the ledger),
 * the only record of the reservations in flight; and the ledger lags behind by the usage events
 * metering has not written yet. A figure primed right after the loss misses both, and the settlement
 * of those requests, finding no reservation, no longer moves it: the cause of the overspend this
 * class prevents. So:
 *
 * - The admission script refuses everything ('cold-store', answered 503 with Retry-After) while the
 *   generation marker of its slot (`budget:generation:{…}`, no TTL: it goes with the data) is missing.
 * - Each replica keeps, in memory, the reservations of its requests whose response is still open
 *   (`track`/`forget`: one map entry per request in flight). Every replica looks at the marker every
 *   `BUDGET_PROBE_MS` (and the admission script tells it at once); on finding it missing it puts back
 *   its open reservations (`BudgetStore.restore`), so a request still in flight settles against a
 *   reservation as it would have.
 * - The replica then waits two probe intervals (every live replica has seen the loss and put its
 *   reservations back, and the usage events of the requests that ended before that were published),
 *   takes the usage stream's last sequence as a watermark, and waits until metering's consumer has
 *   acknowledged every event up to it (acknowledged = in the ledger).
 * - Only then does it write a new marker: balances and key spend are primed lazily from the ledger,
 *   request by request, as on a first request, and now include everything that was admitted.
 *
 * Every replica that sees the loss runs the same steps; the first to finish writes the marker, and
 * a replica that finds a new marker it did not write puts its open reservations back too.
 *
 * A failover (a replica promoted after its master died, on Sentinel or a cluster) keeps the markers
 * but may lose the last writes the master had not yet replicated, among them reservations of
 * requests still in flight: on every failover the replica puts its open reservations back too (one
 * already there is left alone). A lost settlement needs nothing: its reservation, still held, counts
 * at least its cost until it lapses, and the cached figures are primed again from the ledger within
 * BALANCE_TTL_S.
 */
@Injectable()
export class BudgetRecovery implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(BudgetRecovery.name);
  /** Reservations of this replica's requests whose response is not closed yet. */
  private readonly open = new Map<string, RestoredReservation>();
  /** The marker as last seen: undefined before the first look, null while Redis is cold. */
  private generation: string | null | undefined;
  private recovering?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    @Inject(BudgetStore) private readonly store: RecoveryStorePort,
    @Inject(JetStreamConnection) private readonly usage: UsageProgressPort,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'BUDGET_PROBE_MS'>,
    @Optional() @Inject(RedisConnection) redis?: FailoverPort,
  ) {
    redis?.onFailover(() => void this.failover());
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.probe(), this.env.BUDGET_PROBE_MS);
    this.timer.unref();
    void this.probe();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** True once Redis's figures can be trusted (for readiness). */
  get warm(): boolean {
    return typeof this.generation === 'string';
  }

  /** A request was admitted: its reservation is put back if Redis loses it while the request is open. */
  track(reservation: RestoredReservation): void {
    this.open.set(reservation.requestId, reservation);
  }

  /** The request's response closed, or its reservation was released. */
  forget(requestId: string): void {
    this.open.delete(requestId);
  }

  /** The admission script found no marker: recover now rather than at the next probe. */
  lost(): void {
    this.generation = null;
    this.recover();
  }

  /** Redis changed hands: put back the reservations of the requests open here. */
  private async failover(): Promise<void> {
    if (this.stopped || this.open.size === 0) return;
    this.logger.warn(`Redis failed over: putting back ${this.open.size} reservations in flight`);
    await this.retry(() => this.store.restore([...this.open.values()])).catch(() => undefined);
  }

  /** One look at the marker. */
  async probe(): Promise<void> {
    if (this.recovering || this.stopped) return;
    let current: string | null;
    try {
      current = await this.store.generation();
    } catch {
      return; // Redis unreachable: requests already answer 503; look again later.
    }
    if (current === null) {
      this.lost();
      return;
    }
    if (this.generation !== undefined && this.generation !== current) {
      // Another replica rebuilt the state before this one looked: put this one's reservations back.
      this.logger.warn('the budget state in Redis was rebuilt by another replica; putting back the reservations in flight here');
      await this.store.restore([...this.open.values()]).catch((error: Error) => this.logger.error(`reservations not put back: ${error.message}`));
    }
    this.generation = current;
  }

  private recover(): void {
    this.recovering ??= this.run()
      .catch((error: Error) => this.logger.error(`budget recovery failed, will try again: ${error.message}`))
      .finally(() => (this.recovering = undefined));
  }

  private async run(): Promise<void> {
    const observedAt = Date.now();
    this.logger.warn(
      `Redis lost the budget state: metered requests answer 503 until metering has caught up; putting back ${this.open.size} reservations in flight`,
    );
    await this.retry(() => this.store.restore([...this.open.values()]));
    // Every live replica looks within one interval; two leave room for a busy event loop.
    await sleep(Math.max(0, observedAt + 2 * this.env.BUDGET_PROBE_MS - Date.now()));
    const watermark = await this.retry(() => this.usage.lastUsageSequence());
    await this.retry(async () => {
      if (!(await this.usage.meteringCaughtUp(watermark))) throw new Error('metering has not caught up');
    }, CATCH_UP_POLL_MS);
    if (this.stopped) return;
    this.generation = await this.retry(() => this.store.warm(randomUUID()));
    this.logger.log(`budget state rebuilt after ${Date.now() - observedAt} ms: metering caught up to usage event ${watermark}`);
  }

  /** Runs `step` until it succeeds (or the process stops), `pauseMs` apart. */
  private async retry<T>(step: () => Promise<T>, pauseMs = this.env.BUDGET_PROBE_MS): Promise<T> {
    for (;;) {
      try {
        return await step();
      } catch (error) {
        if (this.stopped) throw error;
        await sleep(pauseMs);
      }
    }
  }
}
