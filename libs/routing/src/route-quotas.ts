import { Injectable, Logger, Optional } from '@nestjs/common';
import { ResolvedRoute } from '@gateway/catalog';
import { randomUUID } from 'node:crypto';
import { routeKey, RoutingRedis } from './routing-redis';

/** A concurrency slot whose holder died is freed after this (longer than any text or image call); callers may set their own. */
export const SLOT_TTL_MS = 15 * 60_000;

/**
 * One call per request: checks and takes the route's quotas in the current minute (rpm: requests;
 * tpm: the request's estimated tokens, prompt plus output cap, as providers count them) and a
 * concurrency slot. Returns {1, 0} or {0, ms to wait}.
 * KEYS: rpm, tpm, slots. ARGV: rpm, tpm, tokens, max concurrency, now, slot id, slot ttl, ms to next minute.
 */
const ACQUIRE = `
local now = tonumber(ARGV[5])
local rpm, tpm, tokens, slots = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if slots > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= slots then return {0, 1000} end
end
if rpm > 0 and tonumber(redis.call('GET', KEYS[1]) or '0') >= rpm then return {0, tonumber(ARGV[8])} end
if tpm > 0 then
  local used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used > 0 and used + tokens > tpm then return {0, tonumber(ARGV[8])} end
end
if rpm > 0 then redis.call('INCR', KEYS[1]); redis.call('PEXPIRE', KEYS[1], 61000) end
if tpm > 0 then redis.call('INCRBY', KEYS[2], tokens); redis.call('PEXPIRE', KEYS[2], 61000) end
if slots > 0 then
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[7]), ARGV[6])
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
return {1, 0}
`;

export type QuotaGrant = { granted: true; release: () => void } | { granted: false; retryAfterMs: number };

const NOTHING_HELD = (): void => undefined;

/**
 * Provider quotas of routes (`rpm`, `tpm`, `max_concurrency`), shared by every replica in Redis:
 * one script call per request on a route that has any; the concurrency slot is given back when the
 * call ends (or expires). Redis unavailable: the quotas are not checked (the call goes ahead; the
 * provider's own limits answer 429, which the route's breaker honours), logged once per outage.
 */
@Injectable()
export class RouteQuotas {
  private readonly logger = new Logger(RouteQuotas.name);
  private warned = false;

  constructor(@Optional() private readonly redis?: RoutingRedis) {}

  /**
   * `tokens`: what the request counts against the route's `tpm`, or the function that counts it
   * (called only for a route that has a `tpm`: a prompt's count is not free). `slotTtlMs`: how long
   * the concurrency slot outlives a holder that dies without giving it back.
   */
  async acquire(route: ResolvedRoute, tokens: number | (() => number), now = Date.now(), slotTtlMs = SLOT_TTL_MS): Promise<QuotaGrant> {
    if (!route.hasQuota) return { granted: true, release: NOTHING_HELD };
    if (!this.redis?.available) return this.unchecked(route);
    const minute = Math.floor(now / 60_000);
    const slot = randomUUID();
    const keys = [routeKey(route.label, `rpm:${minute}`), routeKey(route.label, `tpm:${minute}`), routeKey(route.label, 'slots')];
    const args = [
      route.rpm ?? 0,
      route.tpm ?? 0,
      route.tpm ? Math.max(0, Math.ceil(typeof tokens === 'function' ? tokens() : tokens)) : 0,
      route.max_concurrency ?? 0,
      now,
      slot,
      slotTtlMs,
      (minute + 1) * 60_000 - now,
    ];
    try {
      const [granted, waitMs] = (await this.redis.client!.eval(ACQUIRE, keys.length, ...keys, ...args)) as [number, number];
      this.warned = false;
      if (granted !== 1) return { granted: false, retryAfterMs: Number(waitMs) };
      if (!route.max_concurrency) return { granted: true, release: NOTHING_HELD };
      let released = false;
      return {
        granted: true,
        release: () => {
          if (released) return;
          released = true;
          void this.redis?.client?.zrem(keys[2], slot).catch(() => undefined);
        },
      };
    } catch {
      return this.unchecked(route);
    }
  }

  private unchecked(route: ResolvedRoute): QuotaGrant {
    if (!this.warned) this.logger.warn(`Redis unavailable: quotas of route ${route.label} (and any other) are not checked until it is back`);
    this.warned = true;
    return { granted: true, release: NOTHING_HELD };
  }
}
