import { Inject, Injectable, Optional } from '@nestjs/common';
import { AccountBudget, AccountBudgetRequest, countsInCurrentWindow, ErrorCode, Principal, spendWindowId, Subjects } from '@gateway/contracts';
import { BALANCE_TTL_S, BudgetStore, DomainError, NANO_PER_CREDIT, toNano } from '@gateway/platform';
import { ServiceClient } from '../nats/service-client';

export const RESERVATION_TTL_MS = Symbol('RESERVATION_TTL_MS');
/** Now, for the spend windows (injectable in tests). */
export const BUDGET_CLOCK = Symbol('BUDGET_CLOCK');

/** What the budget needs of the Redis store (BudgetStore). */
export type BudgetStorePort = Pick<BudgetStore, 'reserve' | 'release' | 'primeBalance' | 'primeKeySpend'>;

const credits = (nano: number) => (nano / NANO_PER_CREDIT).toFixed(9).replace(/\.?0+$/, '');

/** The window id a proxy key's spend is counted under: the window's start, or `life`. */
export function windowId(principal: Principal, now: Date): string {
  return spendWindowId(principal.proxy?.spendWindow ?? null, now);
}

/**
 * Reserves a request's worst-case cost against the account's credits and, for a proxy key, its
 * allocation in the current spend window — atomically in Redis, so every edge replica shares one
 * budget. metering-service settles each reservation to the real cost. No reservation, no
 * upstream call: 402 naming the limit.
 */
@Injectable()
export class BudgetService {
  private readonly now: () => Date;

  constructor(
    @Inject(BudgetStore) private readonly store: BudgetStorePort,
    private readonly services: ServiceClient,
    @Inject(RESERVATION_TTL_MS) private readonly ttlMs: number,
    @Optional() @Inject(BUDGET_CLOCK) clock?: () => Date,
  ) {
    this.now = clock ?? (() => new Date());
  }

  async reserve(principal: Principal, requestId: string, worstCaseCredits: number): Promise<void> {
    if (principal.keyType === 'dev') return; // DevPass usage never uses credits.
    const now = this.now();
    // The epsilon keeps float noise (0.00009 * 1e9 = 90000.00000000001) from rounding a whole nano up.
    const costNano = Math.max(1, Math.ceil(worstCaseCredits * NANO_PER_CREDIT - 1e-6));
    const proxy = principal.proxy
      ? { keyId: principal.keyId, windowId: windowId(principal, now), allocationNano: toNano(principal.proxy.allocatedAmount) }
      : undefined;
    const request = { accountId: principal.accountId, requestId, costNano, ttlMs: this.ttlMs, proxy };
    let result = await this.store.reserve(request);
    if (!result.ok && (result.reason === 'cold-balance' || result.reason === 'cold-allocation')) {
      await this.prime(principal, now);
      result = await this.store.reserve(request);
    }
    if (result.ok) return;
    if (result.reason === 'credits') {
      throw new DomainError(
        ErrorCode.InsufficientCredits,
        `Insufficient credits: this request may cost up to ${credits(costNano)} credits and the account has ${credits(result.available)} available`,
      );
    }
    if (result.reason === 'allocation') {
      throw new DomainError(
        ErrorCode.AllocationExhausted,
        `Proxy key allocation exhausted: this request may cost up to ${credits(costNano)} credits and the key has ${credits(result.available)} of its ${principal.proxy?.spendWindow ?? 'lifetime'} allocation left`,
      );
    }
    throw new DomainError(ErrorCode.ServiceUnavailable, 'The credit balance could not be loaded; retry with backoff');
  }

  release(principal: Principal, requestId: string): Promise<void> {
    return this.store.release(principal.accountId, requestId, principal.proxy ? principal.keyId : undefined);
  }

  private async prime(principal: Principal, now: Date): Promise<void> {
    const request: AccountBudgetRequest = { accountId: principal.accountId, keyId: principal.proxy ? principal.keyId : undefined };
    const budget = await this.services.request<AccountBudget>(Subjects.accountBudget, request);
    await this.store.primeBalance(principal.accountId, toNano(budget.credits));
    if (principal.proxy && budget.key) {
      const used = countsInCurrentWindow(principal.proxy.spendWindow, budget.key.windowStartedAt, now) ? toNano(budget.key.used) : 0;
      await this.store.primeKeySpend(principal.keyId, windowId(principal, now), used, BALANCE_TTL_S);
    }
  }
}
