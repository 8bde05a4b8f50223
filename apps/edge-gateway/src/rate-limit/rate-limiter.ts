import { GATE_FUNCTIONS } from '@gateway/platform';
import type Redis from 'ioredis';
import type { RateLimit } from './plan-limits';

/**
 * The cheaper path's one atomic script (routes with no reservation: not `@Metered`, no cost
 * estimate, DevPass keys), shared by every edge replica: the revocation epoch, then fixed
 * one-minute windows of requests and tokens per account. A request that would pass either limit is
 * refused and counts nothing. `@FreeSummaryPoll()` routes pass `free`: the first such request of a
 * minute counts nothing and reads the windows as they stand.
 * KEYS: 1 revocation epoch, 2 requests window, 3 tokens window, 4 the free poll's marker
 * ARGV: 1 expected epoch ('' skips it), 2 requests per minute, 3 tokens per minute, 4 tokens, 5 free ('1' or '0')
 */
const CHECK = `${GATE_FUNCTIONS}
if stale(KEYS[1], ARGV[1]) then return {'stale', 0, 0} end
local cost = tonumber(ARGV[4])
if ARGV[5] == '1' and redis.call('SET', KEYS[4], '1', 'EX', 120, 'NX') then
  return {'free', tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0')}
end
local exceeded, requests, tokens = rate_check(KEYS[2], KEYS[3], tonumber(ARGV[2]), tonumber(ARGV[3]), cost)
if exceeded ~= '' then return {exceeded, requests, tokens} end
rate_count(KEYS[2], KEYS[3], cost)
return {'ok', requests + 1, tokens + cost}
`;

/** The minute's window keys of an account (or an account's bucket). */
export function rateLimitKeys(accountId: string, minute: number): { requestsKey: string; tokensKey: string } {
  return { requestsKey: `rl:${accountId}:r:${minute}`, tokensKey: `rl:${accountId}:t:${minute}` };
}

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

export interface RateCheck {
  /** The account (or bucket) the windows belong to. */
  accountId: string;
  limit: RateLimit;
  tokens: number;
  epochKey: string;
  /** The epoch the caller's cached principal was filled under; '' for a principal fresh from key-service. */
  expectedEpoch: string;
  /** A `@FreeSummaryPoll()` route: its first request of a minute is free. */
  freePoll?: boolean;
}

export class RateLimiter {
  private readonly redis: Redis & { gatewayRateLimit(...args: string[]): Promise<[string, number, number]> };

  constructor(redis: Redis) {
    redis.defineCommand('gatewayRateLimit', { numberOfKeys: 4, lua: CHECK });
    this.redis = redis as RateLimiter['redis'];
  }

  /** The decision, or 'stale' when the account's revocation epoch moved (nothing was counted). */
  async check(request: RateCheck, now = Date.now()): Promise<RateLimitDecision | 'stale'> {
    const { minute, resetSeconds } = rateWindow(now);
    const { requestsKey, tokensKey } = rateLimitKeys(request.accountId, minute);
    const [state, requests, tokens] = await this.redis.gatewayRateLimit(
      request.epochKey,
      requestsKey,
      tokensKey,
      `rl:${request.accountId}:me:${minute}`,
      request.expectedEpoch,
      String(request.limit.requestsPerMinute),
      String(request.limit.tokensPerMinute),
      String(request.tokens),
      request.freePoll ? '1' : '0',
    );
    if (state === 'stale') return 'stale';
    const exceeded = state === 'requests' || state === 'tokens' ? state : undefined;
    return rateDecision(request.limit, Number(requests), Number(tokens), resetSeconds, exceeded);
  }
}
