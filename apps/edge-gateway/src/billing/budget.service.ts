import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AdmitGate,
  AdmitResult,
  BALANCE_TTL_S,
  BudgetStore,
  countsInCurrentWindow,
  formatNano,
  reservationNano,
  ReserveRequest,
  ReserveResult,
  spendWindowId,
  toNano,
  windowBucket,
  windowKey,
  windowResetsAt,
  windowSpan,
  nextWindowStart,
  type TightestBudget,
} from '@gateway/billing';
import { AccountBudgetRequest, BudgetWindowSpec, parsePeriod, Principal, Rpc } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { BudgetRecovery } from './budget-recovery';
import { DomainError, ErrorCode } from '@gateway/errors';
import { EdgeEnv } from '../config/edge.env';

/** Now, for the spend windows (injectable in tests). */
export const BUDGET_CLOCK = Symbol('BUDGET_CLOCK');

/** How soon, and at most how far apart, the release of a reservation in doubt is tried (`releaseInDoubt`). */
const IN_DOUBT_FIRST_RETRY_MS = 200;
const IN_DOUBT_MAX_RETRY_MS = 5_000;

/** What the budget needs of the Redis store (BudgetStore). */
export type BudgetStorePort = Pick<BudgetStore, 'admit' | 'release' | 'primeBalance' | 'primeKeySpend' | 'primeWindows'>;

/** How long a proxy key's budget windows stay loaded before they are read from the ledger again. */
const WINDOW_TTL_MS = 300_000;

/** One of a proxy key's budgets as its headers and refusals name it. */
interface NamedBudget {
  period: string;
  timezone: string;
  amount: string;
  /** Unix ms; null: nothing to wait for (a lifetime allocation, an empty rolling window). */
  resetsAt: number | null;
}

/** The window id a proxy key's spend is counted under: the window's start, or `life`. */
export function windowId(principal: Principal, now: Date): string {
  return spendWindowId(principal.proxy?.spendWindow ?? null, now);
}

/**
 * A reservation the admission guard made for a request. A relay that sends the request on claims
 * it (then settling or releasing it is the relay's); unclaimed, it is dropped before the response
 * is sent (the edge's `onSend` hook: a client that retries at once finds its credits free) or, when
 * the client left first, once the connection closes.
 */
export class HeldReservation {
  private done = false;

  constructor(private readonly release: () => Promise<void>) {}

  claim(): void {
    this.done = true;
  }

  /** Releases the reservation unless a relay claimed it (or it was dropped already). */
  readonly drop = (): Promise<void> | undefined => {
    if (this.done) return undefined;
    this.done = true;
    return this.release().catch(() => undefined);
  };
}

/** The request as the budget sees it (the admission guard's `MeteredRequest`). */
interface ReservingRequest {
  id: unknown;
  principal: Principal;
  reservation?: HeldReservation;
}

/**
 * Reserves a request's worst-case cost against the account's credits and, for a proxy key, its
 * allocation in the current spend window — atomically in Redis, in the same script as the
 * revocation-epoch check and the rate limit (`BudgetStore.admit`), so every edge replica shares one
 * budget and a request costs one round trip. metering-service settles each reservation to the real
 * cost. No reservation, no upstream call: 402 naming the limit.
 *
 * The reservation is made at the guard, before the body is validated and the handler runs; the
 * relay that sends the request on `claim`s it (and releases it if the router never answers). A
 * reservation nobody claimed when the response closes (a 4xx from validation, the handler, the
 * client leaving) is released then, since no usage event will settle it.
 */
@Injectable()
export class BudgetService {
  private readonly now: () => Date;

  constructor(
    @Inject(BudgetStore) private readonly store: BudgetStorePort,
    private readonly services: ServiceClient,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'RESERVATION_TTL_MS'>,
    @Optional() @Inject(BUDGET_CLOCK) clock?: () => Date,
    @Optional() private readonly recovery?: BudgetRecovery,
  ) {
    this.now = clock ?? (() => new Date());
  }

  /**
   * One script: the gate (epoch, rate limit) and the reservation, all or nothing. A cold balance or
   * allocation is primed from account-service and the script run once more. The result's refusals
   * are for the caller to answer (`refusal`), in the gate's order: Redis lost its state
   * ('cold-store': BudgetRecovery rebuilds it; nothing is primed meanwhile), stale, rate limit, budget.
   */
  async admit(principal: Principal, requestId: string, worstCaseCredits: number, gate: AdmitGate): Promise<AdmitResult & { costNano: number; at: number }> {
    const now = this.now();
    const request = this.reservation(principal, requestId, worstCaseCredits, now);
    let result = await this.admitOrReleaseInDoubt(principal, request, gate);
    if (!result.ok && (result.reason === 'cold-balance' || result.reason === 'cold-allocation')) {
      await this.prime(principal, now);
      result = await this.admitOrReleaseInDoubt(principal, request, gate);
    }
    if (result.ok) {
      this.recovery?.track({
        accountId: request.accountId,
        requestId,
        costNano: request.costNano,
        // Reservations live on the system clock (the budget clock moves budget windows only).
        expiresAt: Date.now() + this.env.RESERVATION_TTL_MS,
        keyId: request.proxy?.keyId,
      });
    } else if (result.reason === 'cold-store') {
      this.recovery?.lost();
    }
    return { ...result, costNano: request.costNano, at: now.getTime() };
  }

  /**
   * A DevPass key with token windows (its plan's): the request's worst case in tokens (its prompt
   * plus its output cap) held against every window, in the gate's one script; no credits are
   * checked or held (DevPass usage never touches them). metering-service settles it to the tokens used.
   */
  async admitTokens(principal: Principal, requestId: string, tokens: number, gate: AdmitGate): Promise<AdmitResult & { costNano: number; at: number }> {
    const now = this.now();
    const windows = principal.tokenBudgets ?? [];
    const request: ReserveRequest = {
      accountId: principal.accountId,
      requestId,
      costNano: tokens,
      ttlMs: this.env.RESERVATION_TTL_MS,
      devpass: {
        keyId: principal.keyId,
        windows: windows.map((window) => ({ key: windowKey(window), amountNano: Number(window.amount) })),
        at: now.getTime(),
      },
    };
    let result = await this.admitOrReleaseInDoubt(principal, request, gate);
    if (!result.ok && result.reason === 'cold-allocation') {
      await this.primeWindows(principal, windows, now, 'tokens');
      result = await this.admitOrReleaseInDoubt(principal, request, gate);
    }
    if (!result.ok && result.reason === 'cold-store') this.recovery?.lost();
    return { ...result, costNano: tokens, at: now.getTime() };
  }

  /**
   * A proxy key's budget headers: the budget with least left when the request was admitted (the
   * allocation or one of its budget windows), what it had left and when it next frees room.
   */
  headers(principal: Principal, tightest: TightestBudget, at: number): Record<string, string> {
    const budget = this.budgetOf(principal, tightest.window, at, tightest.oldest);
    if (!budget) return {};
    const tokens = principal.keyType === 'dev';
    return {
      'x-budget-period': budget.period,
      'x-budget-timezone': budget.timezone,
      'x-budget-unit': tokens ? 'tokens' : 'credits',
      'x-budget-limit': budget.amount,
      'x-budget-remaining': tokens ? String(tightest.left) : formatNano(tightest.left),
      ...(budget.resetsAt === null ? {} : { 'x-budget-reset': String(Math.ceil(budget.resetsAt / 1000)) }),
    };
  }

  /** The allocation (window 0) or budget window `window` of a proxy key, with when it next frees room. */
  private budgetOf(principal: Principal, window: number, at: number, oldest: number): NamedBudget | null {
    const proxy = principal.proxy;
    if (!proxy) return principal.tokenBudgets && window > 0 ? this.windowOf(principal.tokenBudgets[window - 1], at, oldest) : null;
    if (window === 0) {
      const reset = nextWindowStart(proxy.spendWindow, new Date(at));
      return { period: proxy.spendWindow ?? 'lifetime', timezone: 'UTC', amount: proxy.allocatedAmount, resetsAt: reset ? reset.getTime() : null };
    }
    return this.windowOf(proxy.budgets[window - 1], at, oldest);
  }

  /** A budget window as named to the caller: the script answers when its oldest bucket stops counting; a calendar window resets at its boundary. */
  private windowOf(spec: BudgetWindowSpec | undefined, at: number, oldest: number): NamedBudget | null {
    if (!spec) return null;
    const resetsAt = parsePeriod(spec.period)?.kind === 'rolling' ? (oldest > 0 ? oldest : null) : windowResetsAt(spec, at);
    return { ...spec, resetsAt };
  }

  /**
   * The budget window (`<period>@<timezone>`) that refused a request, for the request log: a proxy
   * key's allocation or one of its windows, a DevPass key's token window. Null for other refusals.
   */
  refusingWindow(principal: Principal, result: AdmitResult): string | null {
    if (result.ok) return null;
    if (result.reason === 'allocation') return `${principal.proxy?.spendWindow ?? 'lifetime'}@UTC`;
    if (result.reason !== 'window') return null;
    const spec = principal.proxy ? principal.proxy.budgets[result.window - 1] : principal.tokenBudgets?.[result.window - 1];
    return spec ? windowKey(spec) : null;
  }

  /** The 402 (or 503) for a reservation the script refused. */
  refusal(principal: Principal, costNano: number, result: ReserveResult, at = this.now().getTime()): DomainError {
    if (!result.ok && result.reason === 'window') {
      const budget = this.budgetOf(principal, result.window, at, result.oldest);
      const when = budget?.resetsAt ? new Date(budget.resetsAt).toISOString() : 'once earlier requests settle';
      if (principal.keyType === 'dev') {
        // A usage limit, not a payment: 429 with when room frees (DevPass usage never touches credits).
        const retryAfter = budget?.resetsAt ? Math.max(1, Math.ceil((budget.resetsAt - at) / 1000)) : 60;
        return new DomainError(
          ErrorCode.RateLimited,
          `DevPass usage limit reached: this request may use up to ${costNano} tokens (its prompt plus its output cap) and the key has ${result.available} left ` +
            `of its plan's ${budget?.period ?? ''} window of ${budget?.amount ?? '?'} tokens (${budget?.timezone ?? 'UTC'}); it frees room at ${when}`,
          undefined,
          { retryAfterSeconds: retryAfter },
        );
      }
      return new DomainError(
        ErrorCode.AllocationExhausted,
        `Proxy key budget exhausted: this request may cost up to ${formatNano(costNano)} credits and the key has ${formatNano(result.available)} left ` +
          `of its ${budget?.period ?? 'budget'} budget of ${budget?.amount ?? '?'} credits (${budget?.timezone ?? 'UTC'}); it frees room at ${when}`,
      );
    }
    if (!result.ok && result.reason === 'credits') {
      return new DomainError(
        ErrorCode.InsufficientCredits,
        `Insufficient credits: this request may cost up to ${formatNano(costNano)} credits and the account has ${formatNano(result.available)} available`,
      );
    }
    if (!result.ok && result.reason === 'allocation') {
      return new DomainError(
        ErrorCode.AllocationExhausted,
        `Proxy key allocation exhausted: this request may cost up to ${formatNano(costNano)} credits and the key has ${formatNano(result.available)} of its ${principal.proxy?.spendWindow ?? 'lifetime'} allocation left`,
      );
    }
    if (!result.ok && result.reason === 'cold-store') {
      return new DomainError(
        ErrorCode.ServiceUnavailable,
        'Budgets are being reloaded from the ledger after the budget store lost its state; retry with backoff',
      );
    }
    return new DomainError(ErrorCode.ServiceUnavailable, 'The credit balance could not be loaded; retry with backoff');
  }

  /** Marks the request's reservation held: released before the response, or when the connection closes, unless a relay claimed it. */
  hold(request: ReservingRequest, response: { once(event: 'close', listener: () => void): unknown }): void {
    const { principal } = request;
    const requestId = String(request.id);
    const reservation = new HeldReservation(() => this.release(principal, requestId));
    request.reservation = reservation;
    const recovery = this.recovery;
    // Once the response closed, the request's usage event is on its way (or nothing is charged):
    // Redis losing its state from then on needs nothing put back for it (BudgetRecovery).
    const closed = recovery
      ? () => {
          recovery.forget(requestId);
          void reservation.drop();
        }
      : reservation.drop;
    response.once('close', closed);
  }

  /** The relay sends the request on: its reservation is now the relay's to settle or release. True when there is one. */
  claim(request: ReservingRequest): boolean {
    if (!request.reservation) return false;
    request.reservation.claim();
    return true;
  }

  /**
   * The admission script, whose answer may be lost with the connection (a Redis failover, a
   * network cut): the script may have run and held the reservation, which no one would release
   * (the request is answered 503, sends no usage event, and was never tracked for BudgetRecovery).
   * Then the reservation is released, idempotently by request id, as soon as Redis answers again.
   */
  private async admitOrReleaseInDoubt(principal: Principal, request: ReserveRequest, gate: AdmitGate): Promise<AdmitResult> {
    try {
      return await this.store.admit(request, gate);
    } catch (error) {
      this.releaseInDoubt(principal, request.requestId);
      throw error;
    }
  }

  /** Releases a reservation that may exist, trying again (200 ms doubling to 5 s) until Redis answers or the reservation's life is over. */
  private releaseInDoubt(principal: Principal, requestId: string): void {
    const giveUpAt = Date.now() + this.env.RESERVATION_TTL_MS;
    let delayMs = IN_DOUBT_FIRST_RETRY_MS;
    const attempt = () => {
      this.release(principal, requestId).catch(() => {
        if (Date.now() + delayMs > giveUpAt) return;
        setTimeout(attempt, delayMs).unref();
        delayMs = Math.min(delayMs * 2, IN_DOUBT_MAX_RETRY_MS);
      });
    };
    attempt();
  }

  release(principal: Principal, requestId: string): Promise<void> {
    this.recovery?.forget(requestId);
    if (principal.keyType === 'dev') return this.store.release(principal.accountId, requestId, principal.keyId, true);
    return this.store.release(principal.accountId, requestId, principal.proxy ? principal.keyId : undefined);
  }

  private reservation(principal: Principal, requestId: string, worstCaseCredits: number, now: Date): ReserveRequest {
    const costNano = reservationNano(worstCaseCredits);
    const proxy = principal.proxy
      ? {
          keyId: principal.keyId,
          windowId: windowId(principal, now),
          allocationNano: toNano(principal.proxy.allocatedAmount),
          windows: principal.proxy.budgets.map((window) => ({ key: windowKey(window), amountNano: toNano(window.amount) })),
          at: now.getTime(),
        }
      : undefined;
    return { accountId: principal.accountId, requestId, costNano, ttlMs: this.env.RESERVATION_TTL_MS, proxy };
  }

  private async prime(principal: Principal, now: Date): Promise<void> {
    const windows: BudgetWindowSpec[] = principal.proxy?.budgets ?? [];
    const budget = await this.readBudget(principal, windows, now, 'credits');
    await this.store.primeBalance(principal.accountId, toNano(budget.credits));
    if (principal.proxy && budget.key) {
      const used = countsInCurrentWindow(principal.proxy.spendWindow, budget.key.windowStartedAt, now) ? toNano(budget.key.used) : 0;
      await this.store.primeKeySpend(principal.accountId, principal.keyId, windowId(principal, now), used, BALANCE_TTL_S);
      await this.loadWindows(principal, windows, budget.key.windows ?? [], 'credits');
    }
  }

  /** Loads a DevPass key's token windows (or a proxy key's) from the ledger into Redis. */
  private async primeWindows(principal: Principal, windows: BudgetWindowSpec[], now: Date, unit: 'credits' | 'tokens'): Promise<void> {
    const budget = await this.readBudget(principal, windows, now, unit);
    await this.loadWindows(principal, windows, budget.key?.windows ?? [], unit);
  }

  /** account-service's figures from the ledger: the balance, the key's allocation spend and its windows' buckets. */
  private readBudget(principal: Principal, windows: BudgetWindowSpec[], now: Date, unit: 'credits' | 'tokens') {
    const request: AccountBudgetRequest = {
      accountId: principal.accountId,
      keyId: principal.proxy || principal.keyType === 'dev' ? principal.keyId : undefined,
      ...(windows.length > 0 ? { windows: windows.map((window) => windowSpan(window, now.getTime())), unit } : {}),
    };
    return this.services.request(Rpc.accountBudget, request);
  }

  private loadWindows(
    principal: Principal,
    windows: BudgetWindowSpec[],
    spent: { at: number; credits: string }[][],
    unit: 'credits' | 'tokens',
  ): Promise<void> {
    // Tokens are counted as they are; credits in nano-credits.
    const amountOf = (value: string) => (unit === 'tokens' ? Number(value) : toNano(value));
    return this.store.primeWindows(
      principal.accountId,
      principal.keyId,
      windows.map((window, index) => ({
        key: windowKey(window),
        buckets: (spent[index] ?? []).map((bucket) => ({ ...windowBucket(window, bucket.at), amountNano: amountOf(bucket.credits) })),
      })),
      WINDOW_TTL_MS,
    );
  }
}
