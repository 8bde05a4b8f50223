import type Redis from 'ioredis';

/**
 * Credit budgets in Redis, shared by every edge replica (reserve) and metering replica (settle).
 * Amounts are integer nano-credits (1e-9): reservations are upper bounds rounded up, the ledger in
 * PostgreSQL stays the exact record. Keys:
 *   bal:{account}            cached credit balance (primed from the database, TTL BALANCE_TTL_S)
 *   resv:{account}[:total|:expiries]   open reservations on the account (hash, sum, expiry set)
 *   pused:{key}:{window}     the proxy key's spend in its current window (primed, then incremented)
 *   resv:{key}[:total|:expiries]       open reservations on a proxy key
 *   bal:{account}:late, pused:{key}:{window}:late   settled while the figure was absent (see SETTLE)
 *   budget:generation        present while Redis holds the budget's state (see BudgetStore.warm)
 */
export const BALANCE_TTL_S = 60;
export const NANO_PER_CREDIT = 1_000_000_000;

export type ReserveResult =
  { ok: true } | { ok: false; reason: 'credits' | 'allocation'; available: number } | { ok: false; reason: 'cold-balance' | 'cold-allocation' | 'cold-store' };

/**
 * Present while Redis holds the budget's state. It is written (with a new value) only once the
 * figures can be trusted again after Redis lost everything (see BudgetRecovery in the edge), and it
 * has no TTL: a Redis restarted empty, or flushed, has no marker, and ADMIT then answers
 * 'cold-store' for every request — nothing is admitted on figures primed while reservations in
 * flight and the metering backlog were missing from both Redis and the ledger.
 */
export const BUDGET_GENERATION_KEY = 'budget:generation';

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
const RESERVE_FUNCTIONS = `
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
`;

const RESERVE = `${RESERVE_FUNCTIONS}
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
 * The edge's gate, shared by its two scripts (this file's ADMIT and the edge's rate limiter): the
 * revocation-epoch check and the plan's fixed one-minute windows of requests and tokens.
 * `stale(key, expected)`: the account's epoch differs from the one the caller's cached principal was
 * filled under (an empty `expected` skips the check: the principal is fresh from key-service).
 * `rate_check` reads the windows and refuses a request that would pass either limit, counting
 * nothing; `rate_count` counts an admitted one.
 */
export const GATE_FUNCTIONS = `
local function stale(key, expected)
  return expected ~= '' and (redis.call('GET', key) or '0') ~= expected
end
local function rate_check(rkey, tkey, request_limit, token_limit, cost)
  local requests = tonumber(redis.call('GET', rkey) or '0')
  local tokens = tonumber(redis.call('GET', tkey) or '0')
  if requests + 1 > request_limit then return 'requests', requests, tokens end
  if cost > 0 and tokens + cost > token_limit then return 'tokens', requests, tokens end
  return '', requests, tokens
end
local function rate_count(rkey, tkey, cost)
  redis.call('INCR', rkey)
  redis.call('EXPIRE', rkey, 120)
  if cost > 0 then
    redis.call('INCRBY', tkey, cost)
    redis.call('EXPIRE', tkey, 120)
  end
end
`;

/*
 * One round trip per metered request: the revocation epoch, the rate limit, then the reservation,
 * committing nothing unless all three pass — a request refused for its budget counts nothing
 * against the rate limit. The reservation is RESERVE's, in the same keys and layout.
 * Before anything, the generation marker: without it Redis lost its state ('cold-store').
 * KEYS: 1-8 as RESERVE's, 9 revocation epoch, 10 requests window, 11 tokens window, 12 the generation marker
 * ARGV: 1-5 as RESERVE's, 6 expected epoch ('' skips it), 7 requests per minute, 8 tokens per minute, 9 tokens
 * Returns {state, available, requests, tokens}: the windows as they stand (counted on 'ok').
 */
const ADMIT = `${RESERVE_FUNCTIONS}${GATE_FUNCTIONS}
if redis.call('EXISTS', KEYS[12]) == 0 then return {'cold-store', 0, 0, 0} end
if stale(KEYS[9], ARGV[6]) then return {'stale', 0, 0, 0} end
local rate_cost = tonumber(ARGV[9])
local exceeded, requests, tokens = rate_check(KEYS[10], KEYS[11], tonumber(ARGV[7]), tonumber(ARGV[8]), rate_cost)
if exceeded ~= '' then return {exceeded, 0, requests, tokens} end
local id, cost, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local balance = redis.call('GET', KEYS[1])
if not balance then return {'cold-balance', 0, requests, tokens} end
local available = tonumber(balance) - sweep(KEYS[2], KEYS[3], KEYS[4], now)
if available < cost then return {'credits', math.max(available, 0), requests, tokens} end
local allocation = tonumber(ARGV[5])
if allocation >= 0 then
  local used = redis.call('GET', KEYS[5])
  if not used then return {'cold-allocation', 0, requests, tokens} end
  local left = allocation - tonumber(used) - sweep(KEYS[6], KEYS[7], KEYS[8], now)
  if left < cost then return {'allocation', math.max(left, 0), requests, tokens} end
  hold(KEYS[6], KEYS[7], KEYS[8], id, cost, now + ttl, ttl)
end
hold(KEYS[2], KEYS[3], KEYS[4], id, cost, now + ttl, ttl)
rate_count(KEYS[10], KEYS[11], rate_cost)
return {'ok', 0, requests + 1, tokens + rate_cost}
`;

/**
 * How long a settlement made while a cached figure was absent is kept for the next prime: longer
 * than a prime takes from reading the ledger to writing the figure.
 */
const LATE_SETTLEMENT_MS = 15_000;

/**
 * Drops a request's reservations and, for a settled request, moves the cached balance and key
 * spend by its real cost — once: only while the account's reservation is still there, so settling
 * the same request again (a redelivered usage event) changes nothing. Without a reservation (one
 * released or expired) the cached figures catch up when they are next loaded from the ledger.
 * A figure that is absent (expired, not primed yet) keeps the cost in its `:late` key for
 * LATE_SETTLEMENT_MS, and the prime adds it: a prime that read the ledger before this request was
 * written and writes its figure after this settlement would otherwise leave it out until the figure
 * next expires (a request counted twice for a minute at worst, never not at all).
 * KEYS as RESERVE's, 9 the balance's late settlements, 10 the key spend's; the key's keys are
 * empty strings for a non-proxy key.
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
local function move(figure, late, op, cost)
  if redis.call('EXISTS', figure) == 1 then
    redis.call(op, figure, cost)
  else
    redis.call(op, late, cost)
    redis.call('PEXPIRE', late, ${LATE_SETTLEMENT_MS})
  end
end
if reserved and tonumber(ARGV[2]) > 0 then
  move(KEYS[1], KEYS[9], 'DECRBY', ARGV[2])
  if KEYS[5] ~= '' then move(KEYS[5], KEYS[10], 'INCRBY', ARGV[2]) end
end
return 1
`;

/*
 * Primes a cached figure from the ledger unless it is there, with what was settled while it was
 * absent (its `:late` key) added: those settlements may have committed after the ledger was read.
 * KEYS: 1 the figure, 2 its late settlements; ARGV: 1 the ledger's figure, 2 TTL in seconds
 */
const PRIME = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local late = redis.call('GET', KEYS[2])
if late then
  redis.call('INCRBY', KEYS[1], late)
  redis.call('DEL', KEYS[2])
end
return 1
`;

/*
 * Puts back a reservation Redis lost (the edge still has its request in flight): held as ADMIT holds
 * it, without checking anything (it was admitted already), and only if it is not there yet.
 * KEYS: 1-3 the account's reservations, 4-6 the key's ('' for none)
 * ARGV: 1 request id, 2 amount, 3 expiry (ms since the epoch), 4 now
 */
const RESTORE = `
local function put(hash, total, expiries, id, cost, expires, ttl)
  if redis.call('HSETNX', hash, id, cost) == 0 then return end
  redis.call('INCRBY', total, cost)
  redis.call('ZADD', expiries, expires, id)
  for _, key in ipairs({hash, total, expiries}) do
    if redis.call('PTTL', key) < ttl * 2 then redis.call('PEXPIRE', key, ttl * 2) end
  end
end
local id, cost, expires, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl = math.max(expires - now, 1000)
put(KEYS[1], KEYS[2], KEYS[3], id, cost, expires, ttl)
if KEYS[4] ~= '' then put(KEYS[4], KEYS[5], KEYS[6], id, cost, expires, ttl) end
return 1
`;

const keys = {
  balance: (accountId: string) => `bal:${accountId}`,
  keySpend: (keyId: string, windowId: string) => `pused:${keyId}:${windowId}`,
  /** Settlements made while a cached figure was absent, for its next prime (see SETTLE). */
  late: (figure: string) => `${figure}:late`,
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

/** What the edge's gate checks before the reservation (see ADMIT). */
export interface AdmitGate {
  /** The account's revocation-epoch key and the epoch the caller's principal was filled under ('' skips the check). */
  epochKey: string;
  expectedEpoch: string;
  /** The plan's windows: their keys, limits, and the tokens this request counts. */
  requestsKey: string;
  tokensKey: string;
  requestsPerMinute: number;
  tokensPerMinute: number;
  tokens: number;
}

export type AdmitResult = (ReserveResult | { ok: false; reason: 'stale' } | { ok: false; reason: 'requests' | 'tokens' }) & {
  /** The request and token windows as they stand, this request counted when it was admitted. */
  requests: number;
  tokens: number;
};

/** The scripts as ioredis commands: sent once, then called by SHA (EVALSHA). */
interface BudgetCommands {
  gatewayAdmit(...args: string[]): Promise<[string, number, number, number]>;
  gatewayReserve(...args: string[]): Promise<[string, number]>;
  gatewaySettle(...args: string[]): Promise<number>;
  gatewayRestore(...args: string[]): Promise<number>;
  gatewayPrime(...args: string[]): Promise<number>;
}

/** A reservation to put back after Redis lost it (BudgetStore.restore). */
export interface RestoredReservation {
  accountId: string;
  requestId: string;
  costNano: number;
  /** When it lapses, in ms since the epoch. */
  expiresAt: number;
  keyId?: string;
}

export class BudgetStore {
  private readonly redis: Redis & BudgetCommands;

  constructor(redis: Redis) {
    redis.defineCommand('gatewayAdmit', { numberOfKeys: 12, lua: ADMIT });
    redis.defineCommand('gatewayReserve', { numberOfKeys: 8, lua: RESERVE });
    redis.defineCommand('gatewaySettle', { numberOfKeys: 10, lua: SETTLE });
    redis.defineCommand('gatewayPrime', { numberOfKeys: 2, lua: PRIME });
    redis.defineCommand('gatewayRestore', { numberOfKeys: 6, lua: RESTORE });
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

  /**
   * The edge's one round trip per metered request: the revocation epoch, the rate limit and the
   * reservation (`reserve`'s, same keys and layout), all or nothing.
   */
  async admit(request: ReserveRequest, gate: AdmitGate): Promise<AdmitResult> {
    const proxy = request.proxy;
    const [state, available, requests, tokens] = await this.redis.gatewayAdmit(
      keys.balance(request.accountId),
      ...keys.reservations(request.accountId),
      proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : 'unused:spend',
      ...(proxy ? keys.reservations(proxy.keyId) : ['unused:a', 'unused:b', 'unused:c']),
      gate.epochKey,
      gate.requestsKey,
      gate.tokensKey,
      BUDGET_GENERATION_KEY,
      request.requestId,
      String(request.costNano),
      String(Date.now()),
      String(request.ttlMs),
      String(proxy ? proxy.allocationNano : -1),
      gate.expectedEpoch,
      String(gate.requestsPerMinute),
      String(gate.tokensPerMinute),
      String(gate.tokens),
    );
    const windows = { requests: Number(requests), tokens: Number(tokens) };
    if (state === 'ok') return { ok: true, ...windows };
    if (state === 'credits' || state === 'allocation') return { ok: false, reason: state, available: Number(available), ...windows };
    return { ok: false, reason: state as 'cold-balance' | 'cold-allocation' | 'cold-store' | 'stale' | 'requests' | 'tokens', ...windows };
  }

  /** The generation marker: null when Redis lost the budget's state (or never had it). */
  generation(): Promise<string | null> {
    return this.redis.get(BUDGET_GENERATION_KEY);
  }

  /**
   * Declares Redis's figures trustworthy again: writes the marker unless one is there (another
   * replica got there first). Resolves with the generation now in force.
   */
  async warm(generation: string): Promise<string> {
    const set = await this.redis.set(BUDGET_GENERATION_KEY, generation, 'NX');
    return set === 'OK' ? generation : ((await this.redis.get(BUDGET_GENERATION_KEY)) ?? generation);
  }

  /** Puts back reservations Redis lost, in one round trip; one already there is left alone. */
  async restore(reservations: RestoredReservation[]): Promise<void> {
    if (reservations.length === 0) return;
    const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { gatewayRestore(...args: string[]): unknown };
    const now = String(Date.now());
    for (const reservation of reservations) {
      pipeline.gatewayRestore(
        ...keys.reservations(reservation.accountId),
        ...(reservation.keyId ? keys.reservations(reservation.keyId) : ['', '', '']),
        reservation.requestId,
        String(reservation.costNano),
        String(reservation.expiresAt),
        now,
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0];
  }

  /** Loads the database's figures when Redis has none (first request, or after the TTL). */
  async primeBalance(accountId: string, creditsNano: number): Promise<void> {
    const figure = keys.balance(accountId);
    await this.redis.gatewayPrime(figure, keys.late(figure), String(creditsNano), String(BALANCE_TTL_S));
  }

  async primeKeySpend(keyId: string, windowId: string, usedNano: number, ttlSeconds: number): Promise<void> {
    const figure = keys.keySpend(keyId, windowId);
    await this.redis.gatewayPrime(figure, keys.late(figure), String(usedNano), String(ttlSeconds));
  }

  /** Drops a reservation whose request will produce no usage event (it never reached the router). */
  async release(accountId: string, requestId: string, keyId?: string): Promise<void> {
    await this.settle(accountId, requestId, 0, keyId ? { keyId, windowId: 'none' } : undefined);
  }

  async settle(accountId: string, requestId: string, costNano: number, proxy?: { keyId: string; windowId: string }): Promise<void> {
    await this.redis.gatewaySettle(...settleArgs({ accountId, requestId, costNano, proxy }));
  }

  /**
   * Settles many requests in one round trip (a pipeline of SETTLE calls, each exactly as `settle`):
   * resolves with the error of each settlement that failed (null for those that did not), in order.
   */
  async settleMany(settlements: Settlement[]): Promise<(Error | null)[]> {
    if (settlements.length === 0) return [];
    const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { gatewaySettle(...args: string[]): unknown };
    for (const settlement of settlements) pipeline.gatewaySettle(...settleArgs(settlement));
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

/** The SETTLE script's keys and arguments for one settlement (`settle` and `settleMany`). */
function settleArgs({ accountId, requestId, costNano, proxy }: Settlement): string[] {
  return [
    keys.balance(accountId),
    ...keys.reservations(accountId),
    proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : '',
    ...(proxy ? keys.reservations(proxy.keyId) : ['', '', '']),
    keys.late(keys.balance(accountId)),
    proxy ? keys.late(keys.keySpend(proxy.keyId, proxy.windowId)) : '',
    requestId,
    String(costNano),
  ];
}
