import type Redis from 'ioredis';

/**
 * Credit budgets in Redis, shared by every edge replica (reserve) and metering replica (settle).
 * Amounts are integer nano-credits (1e-9): reservations are upper bounds rounded up, the ledger in
 * PostgreSQL stays the exact record. Keys:
 *   bal:{account}            cached credit balance (primed from the database, TTL BALANCE_TTL_S)
 *   resv:{account}[:total|:expiries]   open reservations on the account (hash, sum, expiry set)
 *   pused:{key}:{window}     the proxy key's spend in its current window (primed, then incremented)
 *   resv:{key}[:total|:expiries]       open reservations on a proxy key
 */
export const BALANCE_TTL_S = 60;
export const NANO_PER_CREDIT = 1_000_000_000;

export type ReserveResult =
  { ok: true } | { ok: false; reason: 'credits' | 'allocation'; available: number } | { ok: false; reason: 'cold-balance' | 'cold-allocation' };

export interface ReserveRequest {
  accountId: string;
  requestId: string;
  costNano: number;
  /** How long an unsettled reservation holds (a request whose usage event never comes). */
  ttlMs: number;
  proxy?: { keyId: string; windowId: string; allocationNano: number };
}

/*
 * Each reservation set is a hash (request id → amount), a running total, and a sorted set of
 * expiry times, so a reservation costs O(log n) however many are open; expired ones (requests whose
 * usage event never came) are swept a few at a time.
 * KEYS: 1 balance, 2 reservations, 3 total, 4 expiries, 5 key spend, 6 key reservations, 7 key total, 8 key expiries
 */
const RESERVE = `
local function sweep(hash, total, expiries, now)
  local expired = redis.call('ZRANGEBYSCORE', expiries, '-inf', now, 'LIMIT', 0, 16)
  for _, id in ipairs(expired) do
    local amount = redis.call('HGET', hash, id)
    if amount then
      redis.call('DECRBY', total, amount)
      redis.call('HDEL', hash, id)
    end
    redis.call('ZREM', expiries, id)
  end
  return tonumber(redis.call('GET', total) or '0')
end
local function hold(hash, total, expiries, id, cost, expires, ttl)
  redis.call('HSET', hash, id, cost)
  redis.call('INCRBY', total, cost)
  redis.call('ZADD', expiries, expires, id)
  for _, key in ipairs({hash, total, expiries}) do redis.call('PEXPIRE', key, ttl * 2) end
end
local id, cost, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local balance = redis.call('GET', KEYS[1])
if not balance then return {'cold-balance', 0} end
local available = tonumber(balance) - sweep(KEYS[2], KEYS[3], KEYS[4], now)
if available < cost then return {'credits', math.max(available, 0)} end
local allocation = tonumber(ARGV[5])
if allocation >= 0 then
  local used = redis.call('GET', KEYS[5])
  if not used then return {'cold-allocation', 0} end
  local left = allocation - tonumber(used) - sweep(KEYS[6], KEYS[7], KEYS[8], now)
  if left < cost then return {'allocation', math.max(left, 0)} end
  hold(KEYS[6], KEYS[7], KEYS[8], id, cost, now + ttl, ttl)
end
hold(KEYS[2], KEYS[3], KEYS[4], id, cost, now + ttl, ttl)
return {'ok', 0}
`;

/**
 * Drops a request's reservations and, for a settled request, moves the cached balance and key
 * spend by its real cost — once: only while the account's reservation is still there, so settling
 * the same request again (a redelivered usage event) changes nothing. Without a reservation (one
 * released or expired) the cached figures catch up when they are next loaded from the ledger.
 * KEYS as RESERVE's; the key's keys are empty strings for a non-proxy key.
 */
const SETTLE = `
local function drop(hash, total, expiries, id)
  local amount = redis.call('HGET', hash, id)
  if amount then
    redis.call('DECRBY', total, amount)
    redis.call('HDEL', hash, id)
  end
  redis.call('ZREM', expiries, id)
  return amount
end
local reserved = drop(KEYS[2], KEYS[3], KEYS[4], ARGV[1])
if KEYS[6] ~= '' then drop(KEYS[6], KEYS[7], KEYS[8], ARGV[1]) end
local cost = tonumber(ARGV[2])
if reserved and cost > 0 then
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECRBY', KEYS[1], cost) end
  if KEYS[5] ~= '' and redis.call('EXISTS', KEYS[5]) == 1 then redis.call('INCRBY', KEYS[5], cost) end
end
return 1
`;

const keys = {
  balance: (accountId: string) => `bal:${accountId}`,
  keySpend: (keyId: string, windowId: string) => `pused:${keyId}:${windowId}`,
  /** The hash, total and expiry set of the reservations on an account or a key. */
  reservations: (owner: string) => [`resv:${owner}`, `resv:${owner}:total`, `resv:${owner}:expiries`],
};

/** Credits as integer nano-credits, rounded up (a reservation or charge is never understated). */
export function toNano(credits: string | number): number {
  const [whole, fraction = ''] = String(credits).split('.');
  const digits = (fraction + '000000000').slice(0, 9);
  const rest = fraction.slice(9).replace(/0+$/, '');
  const sign = whole.startsWith('-') ? -1 : 1;
  const nano = Math.abs(Number(whole)) * NANO_PER_CREDIT + Number(digits);
  return sign * (nano + (rest && sign > 0 ? 1 : 0));
}

/** The scripts as ioredis commands: sent once, then called by SHA (EVALSHA). */
interface BudgetCommands {
  gatewayReserve(...args: string[]): Promise<[string, number]>;
  gatewaySettle(...args: string[]): Promise<number>;
}

export class BudgetStore {
  private readonly redis: Redis & BudgetCommands;

  constructor(redis: Redis) {
    redis.defineCommand('gatewayReserve', { numberOfKeys: 8, lua: RESERVE });
    redis.defineCommand('gatewaySettle', { numberOfKeys: 8, lua: SETTLE });
    this.redis = redis as Redis & BudgetCommands;
  }

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    const proxy = request.proxy;
    const [state, available] = await this.redis.gatewayReserve(
      keys.balance(request.accountId),
      ...keys.reservations(request.accountId),
      proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : 'unused:spend',
      ...(proxy ? keys.reservations(proxy.keyId) : ['unused:a', 'unused:b', 'unused:c']),
      request.requestId,
      String(request.costNano),
      String(Date.now()),
      String(request.ttlMs),
      String(proxy ? proxy.allocationNano : -1),
    );
    if (state === 'ok') return { ok: true };
    if (state === 'credits' || state === 'allocation') return { ok: false, reason: state, available: Number(available) };
    return { ok: false, reason: state as 'cold-balance' | 'cold-allocation' };
  }

  /** Loads the database's figures when Redis has none (first request, or after the TTL). */
  async primeBalance(accountId: string, creditsNano: number): Promise<void> {
    await this.redis.set(keys.balance(accountId), String(creditsNano), 'EX', BALANCE_TTL_S, 'NX');
  }

  async primeKeySpend(keyId: string, windowId: string, usedNano: number, ttlSeconds: number): Promise<void> {
    await this.redis.set(keys.keySpend(keyId, windowId), String(usedNano), 'EX', ttlSeconds, 'NX');
  }

  /** Drops a reservation whose request will produce no usage event (it never reached the router). */
  async release(accountId: string, requestId: string, keyId?: string): Promise<void> {
    await this.settle(accountId, requestId, 0, keyId ? { keyId, windowId: 'none' } : undefined);
  }

  async settle(accountId: string, requestId: string, costNano: number, proxy?: { keyId: string; windowId: string }): Promise<void> {
    await this.redis.gatewaySettle(
      keys.balance(accountId),
      ...keys.reservations(accountId),
      proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : '',
      ...(proxy ? keys.reservations(proxy.keyId) : ['', '', '']),
      requestId,
      String(costNano),
    );
  }

  /**
   * Settles many requests in one round trip (a pipeline of SETTLE calls, each exactly as `settle`):
   * resolves with the error of each settlement that failed (null for those that did not), in order.
   */
  async settleMany(settlements: Settlement[]): Promise<(Error | null)[]> {
    if (settlements.length === 0) return [];
    const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { gatewaySettle(...args: string[]): unknown };
    for (const { accountId, requestId, costNano, proxy } of settlements) {
      pipeline.gatewaySettle(
        keys.balance(accountId),
        ...keys.reservations(accountId),
        proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : '',
        ...(proxy ? keys.reservations(proxy.keyId) : ['', '', '']),
        requestId,
        String(costNano),
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    return settlements.map((_, index) => (replies[index] ? replies[index][0] : new Error('no reply from Redis')));
  }
}

/** One request to settle: see BudgetStore.settle. */
export interface Settlement {
  accountId: string;
  requestId: string;
  costNano: number;
  proxy?: { keyId: string; windowId: string };
}
