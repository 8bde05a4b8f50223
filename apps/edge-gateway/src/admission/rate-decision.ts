import type { RateLimit } from './plan-limits';

/**
 * The plan's fixed one-minute windows of requests and tokens per account (or account's bucket),
 * counted in Redis by the budget scripts (`BudgetStore.admit` and `BudgetStore.rateLimit` in
 * @gateway/billing), shared by every edge replica. This file turns their figures into the decision
 * the `x-ratelimit-*` headers and the 429 report.
 */

/** The fixed window `now` falls in, and the seconds until it resets. */
export function rateWindow(now: number): { minute: number; resetSeconds: number } {
  const minute = Math.floor(now / 60_000);
  return { minute, resetSeconds: Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)) };
}

export interface RateLimitDecision {
  allowed: boolean;
  exceeded?: 'requests' | 'tokens';
  limit: RateLimit;
  remainingRequests: number;
  remainingTokens: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** A decision from the windows' figures (`requests` and `tokens` as they stand, this request counted when allowed). */
export function rateDecision(limit: RateLimit, requests: number, tokens: number, resetSeconds: number, exceeded?: 'requests' | 'tokens'): RateLimitDecision {
  return {
    allowed: exceeded === undefined,
    exceeded,
    limit,
    remainingRequests: Math.max(0, limit.requestsPerMinute - requests),
    remainingTokens: Math.max(0, limit.tokensPerMinute - tokens),
    resetSeconds,
  };
}
