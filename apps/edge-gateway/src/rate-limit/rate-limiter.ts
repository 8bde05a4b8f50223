import type Redis from 'ioredis';
import type { RateLimit } from './plan-limits';

/**
 * One atomic script per request, shared by every edge replica: fixed one-minute windows of
 * requests and tokens per account. A request that would pass either limit is refused and counts
 * nothing.
 */
const CHECK = `
local requests = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokens = tonumber(redis.call('GET', KEYS[2]) or '0')
local request_limit, token_limit, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if requests + 1 > request_limit then return {0, requests, tokens, 'requests'} end
if cost > 0 and tokens + cost > token_limit then return {0, requests, tokens, 'tokens'} end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], 120)
if cost > 0 then
  redis.call('INCRBY', KEYS[2], cost)
  redis.call('EXPIRE', KEYS[2], 120)
end
return {1, requests + 1, tokens + cost, ''}
`;

export interface RateLimitDecision {
  allowed: boolean;
  exceeded?: 'requests' | 'tokens';
  limit: RateLimit;
  remainingRequests: number;
  remainingTokens: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export class RateLimiter {
  private readonly redis: Redis & { gatewayRateLimit(...args: string[]): Promise<[number, number, number, string]> };

  constructor(redis: Redis) {
    redis.defineCommand('gatewayRateLimit', { numberOfKeys: 2, lua: CHECK });
    this.redis = redis as RateLimiter['redis'];
  }

  async check(accountId: string, limit: RateLimit, tokens: number, now = Date.now()): Promise<RateLimitDecision> {
    const minute = Math.floor(now / 60_000);
    const resetSeconds = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    const [allowed, requests, usedTokens, exceeded] = await this.redis.gatewayRateLimit(
      `rl:${accountId}:r:${minute}`,
      `rl:${accountId}:t:${minute}`,
      String(limit.requestsPerMinute),
      String(limit.tokensPerMinute),
      String(tokens),
    );
    return {
      allowed: allowed === 1,
      exceeded: (exceeded || undefined) as RateLimitDecision['exceeded'],
      limit,
      remainingRequests: Math.max(0, limit.requestsPerMinute - Number(requests)),
      remainingTokens: Math.max(0, limit.tokensPerMinute - Number(usedTokens)),
      resetSeconds,
    };
  }

  /** The current standing, counting nothing (for a request that does not use the quota). */
  async peek(accountId: string, limit: RateLimit, now = Date.now()): Promise<RateLimitDecision> {
    const minute = Math.floor(now / 60_000);
    const [requests, tokens] = await this.redis.mget(`rl:${accountId}:r:${minute}`, `rl:${accountId}:t:${minute}`);
    return {
      allowed: true,
      limit,
      remainingRequests: Math.max(0, limit.requestsPerMinute - Number(requests ?? 0)),
      remainingTokens: Math.max(0, limit.tokensPerMinute - Number(tokens ?? 0)),
      resetSeconds: Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)),
    };
  }

  /** The first `/user/me` of a minute is free; later ones count (the spec allows polling once a minute). */
  async freeSummaryPoll(accountId: string, now = Date.now()): Promise<boolean> {
    const minute = Math.floor(now / 60_000);
    return (await this.redis.set(`rl:${accountId}:me:${minute}`, '1', 'EX', 120, 'NX')) === 'OK';
  }
}
