import type { Plan } from '@gateway/contracts';

export interface RateLimit {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

/** Documented defaults (README); `PLAN_RATE_LIMITS` overrides any of them. */
export const DEFAULT_RATE_LIMITS: Record<Plan, RateLimit> = {
  free: { requestsPerMinute: 20, tokensPerMinute: 40_000 },
  basic: { requestsPerMinute: 60, tokensPerMinute: 150_000 },
  standard: { requestsPerMinute: 300, tokensPerMinute: 1_000_000 },
  pro: { requestsPerMinute: 1_000, tokensPerMinute: 5_000_000 },
  enterprise: { requestsPerMinute: 5_000, tokensPerMinute: 20_000_000 },
};

export function parseRateLimits(value: string): Record<Plan, RateLimit> {
  const limits = { ...DEFAULT_RATE_LIMITS };
  for (const pair of value.split(',').filter(Boolean)) {
    const [plan, figures] = pair.split('=') as [Plan, string];
    const [requests, tokens] = figures.split(':').map(Number);
    limits[plan] = { requestsPerMinute: requests, tokensPerMinute: tokens };
  }
  return limits;
}
