import type Redis from 'ioredis';
import { loadScript, type ScriptName } from './lua-scripts';

/**
 * Credit budgets in Redis, shared by every edge replica (admit) and metering replica (settle).
 * Amounts are integer nano-credits (money.ts): reservations are upper bounds rounded up, the ledger
 * in PostgreSQL stays the exact record. The scripts are the `.lua` files in ./lua; this class is the
 * one place that names their KEYS and ARGV. Keys:
 *   bal:{account}            cached credit balance (primed from the database, TTL BALANCE_TTL_S)
 *   resv:{account}[:total|:expiries]   open reservations on the account (hash, sum, expiry set)
 *   pused:{key}:{window}     the proxy key's spend in its current window (primed, then incremented)
 *   resv:{key}[:total|:expiries]       open reservations on a proxy key
 *   bal:{account}:late, pused:{key}:{window}:late   settled while the figure was absent (settle.lua)
 *   rl:{bucket}:r|t|me:{minute}        the rate limit's request and token windows, the free poll's marker
 *   budget:generation        present while Redis holds the budget's state (see BudgetStore.warm)
 */
export const BALANCE_TTL_S = 60;

/**
 * Present while Redis holds the budget's state. It is written (with a new value) only once the
 * figures can be trusted again after Redis lost everything (see BudgetRecovery in the edge), and it
 * has no TTL: a Redis restarted empty, or flushed, has no marker, and admit then answers
 * 'cold-store' for every request — nothing is admitted on figures primed while reservations in
 * flight and the metering backlog were missing from both Redis and the ledger.
 */
export const BUDGET_GENERATION_KEY = 'budget:generation';

/**
 * How long a settlement made while a cached figure was absent is kept for the next prime: longer
 * than a prime takes from reading the ledger to writing the figure.
 */
const LATE_SETTLEMENT_MS = 15_000;

const keys = {
  balance: (accountId: string) => `bal:${accountId}`,
  keySpend: (keyId: string, windowId: string) => `pused:${keyId}:${windowId}`,
  /** Settlements made while a cached figure was absent, for its next prime (see settle.lua). */
  late: (figure: string) => `${figure}:late`,
  /** The hash, total and expiry set of the reservations on an account or a key. */
  reservations: (owner: string) => [`resv:${owner}`, `resv:${owner}:total`, `resv:${owner}:expiries`],
  /** The rate limit's windows of a bucket (an account, or an account's named bucket) in one minute. */
  requests: (bucket: string, minute: number) => `rl:${bucket}:r:${minute}`,
  tokens: (bucket: string, minute: number) => `rl:${bucket}:t:${minute}`,
  freePoll: (bucket: string, minute: number) => `rl:${bucket}:me:${minute}`,
};

export interface ReserveRequest {
  accountId: string;
  requestId: string;
  costNano: number;
  /** How long an unsettled reservation holds (a request whose usage event never comes). */
  ttlMs: number;
  proxy?: { keyId: string; windowId: string; allocationNano: number };
}

export type ReserveResult =
  { ok: true } | { ok: false; reason: 'credits' | 'allocation'; available: number } | { ok: false; reason: 'cold-balance' | 'cold-allocation' | 'cold-store' };

/** The edge's gate before any reservation: the revocation epoch and the plan's one-minute windows. */
export interface AdmitGate {
  /** The account's revocation-epoch key and the epoch the caller's principal was filled under ('' skips the check). */
  epochKey: string;
  expectedEpoch: string;
  /** Whose windows: the account, or an account's named bucket; and the minute (ms since the epoch / 60 000). */
  bucket: string;
  minute: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** The tokens this request counts. */
  tokens: number;
}

export type AdmitResult = (ReserveResult | { ok: false; reason: 'stale' } | { ok: false; reason: 'requests' | 'tokens' }) & {
  /** The request and token windows as they stand, this request counted when it was admitted. */
  requests: number;
  tokens: number;
};

/** The gate alone, for requests that reserve nothing; a free poll's first request of a minute counts nothing. */
export interface RateLimitCheck extends AdmitGate {
  freePoll?: boolean;
}

export interface RateLimitResult {
  state: 'ok' | 'free' | 'stale' | 'requests' | 'tokens';
  /** The windows as they stand, this request counted when it was. */
  requests: number;
  tokens: number;
}

/** One request to settle (its real cost) or release (cost 0). */
export interface Settlement {
  accountId: string;
  requestId: string;
  costNano: number;
  proxy?: { keyId: string; windowId: string };
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

/** A script's KEYS and ARGV, as built by the one method that runs it. */
interface Call {
  keys: string[];
  args: (string | number)[];
}

const SCRIPTS: Record<ScriptName, { command: string; numberOfKeys: number }> = {
  admit: { command: 'billingAdmit', numberOfKeys: 12 },
  'rate-limit': { command: 'billingRateLimit', numberOfKeys: 4 },
  settle: { command: 'billingSettle', numberOfKeys: 10 },
  prime: { command: 'billingPrime', numberOfKeys: 2 },
  restore: { command: 'billingRestore', numberOfKeys: 6 },
};

/** The sources, read once per process. */
let sources: Record<ScriptName, string> | undefined;

type Commands = Record<string, (...args: (string | number)[]) => Promise<unknown>>;

/**
 * The budget scripts behind named arguments. Each script is an ioredis command (`defineCommand`):
 * sent once, then called by SHA (EVALSHA, falling back to EVAL when Redis lost its script cache).
 */
export class BudgetStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    options: { now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
    sources ??= Object.fromEntries(Object.keys(SCRIPTS).map((name) => [name, loadScript(name)])) as Record<ScriptName, string>;
    for (const [name, { command, numberOfKeys }] of Object.entries(SCRIPTS)) {
      redis.defineCommand(command, { numberOfKeys, lua: sources[name as ScriptName] });
    }
  }

  /**
   * The edge's one round trip per metered request: the generation marker, the revocation epoch,
   * the rate limit and the reservation, all or nothing.
   */
  async admit(request: ReserveRequest, gate: AdmitGate): Promise<AdmitResult> {
    const { accountId, requestId, costNano, ttlMs, proxy } = request;
    const [state, available, requests, tokens] = await this.run<[string, number, number, number]>('admit', {
      keys: [
        keys.balance(accountId),
        ...keys.reservations(accountId),
        // A non-proxy key reads none of these (a negative allocation): stand-ins of the same account.
        proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : `${keys.balance(accountId)}:nokey`,
        ...keys.reservations(proxy ? proxy.keyId : `${accountId}:nokey`),
        gate.epochKey,
        keys.requests(gate.bucket, gate.minute),
        keys.tokens(gate.bucket, gate.minute),
        BUDGET_GENERATION_KEY,
      ],
      args: [
        requestId,
        costNano,
        this.now(),
        ttlMs,
        proxy ? proxy.allocationNano : -1,
        gate.expectedEpoch,
        gate.requestsPerMinute,
        gate.tokensPerMinute,
        gate.tokens,
      ],
    });
    const windows = { requests: Number(requests), tokens: Number(tokens) };
    if (state === 'ok') return { ok: true, ...windows };
    if (state === 'credits' || state === 'allocation') return { ok: false, reason: state, available: Number(available), ...windows };
    return { ok: false, reason: state as 'cold-balance' | 'cold-allocation' | 'cold-store' | 'stale' | 'requests' | 'tokens', ...windows };
  }

  /** The gate alone (revocation epoch and rate limit), for a request that reserves nothing. */
  async rateLimit(check: RateLimitCheck): Promise<RateLimitResult> {
    const [state, requests, tokens] = await this.run<[RateLimitResult['state'], number, number]>('rate-limit', {
      keys: [check.epochKey, keys.requests(check.bucket, check.minute), keys.tokens(check.bucket, check.minute), keys.freePoll(check.bucket, check.minute)],
      args: [check.expectedEpoch, check.requestsPerMinute, check.tokensPerMinute, check.tokens, check.freePoll ? '1' : '0'],
    });
    return { state, requests: Number(requests), tokens: Number(tokens) };
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
    const now = this.now();
    const calls = reservations.map(({ accountId, requestId, costNano, expiresAt, keyId }) => ({
      keys: [...keys.reservations(accountId), ...keys.reservations(keyId ?? `${accountId}:nokey`)],
      args: [requestId, costNano, expiresAt, now, keyId ? '1' : '0'],
    }));
    const failed = (await this.runMany('restore', calls)).find((error) => error);
    if (failed) throw failed;
  }

  /** Loads the database's balance when Redis has none (first request, or after the TTL). */
  primeBalance(accountId: string, creditsNano: number): Promise<void> {
    return this.prime(keys.balance(accountId), creditsNano, BALANCE_TTL_S);
  }

  /** Loads the database's spend of a proxy key in its current window when Redis has none. */
  primeKeySpend(keyId: string, windowId: string, usedNano: number, ttlSeconds: number): Promise<void> {
    return this.prime(keys.keySpend(keyId, windowId), usedNano, ttlSeconds);
  }

  /** Drops a reservation whose request will produce no usage event (it never reached the router). */
  async release(accountId: string, requestId: string, keyId?: string): Promise<void> {
    await this.settle({ accountId, requestId, costNano: 0, proxy: keyId ? { keyId, windowId: 'none' } : undefined });
  }

  /** Settles a request to its real cost; settling it again (a redelivered usage event) changes nothing. */
  async settle(settlement: Settlement): Promise<void> {
    await this.run('settle', settleCall(settlement));
  }

  /**
   * Settles many requests in one round trip (a pipeline, each exactly as `settle`): resolves with
   * the error of each settlement that failed (null for those that did not), in order.
   */
  settleMany(settlements: Settlement[]): Promise<(Error | null)[]> {
    return this.runMany('settle', settlements.map(settleCall));
  }

  private async prime(figure: string, value: number, ttlSeconds: number): Promise<void> {
    await this.run('prime', { keys: [figure, keys.late(figure)], args: [value, ttlSeconds] });
  }

  private run<T>(script: ScriptName, call: Call): Promise<T> {
    return (this.redis as unknown as Commands)[SCRIPTS[script].command](...call.keys, ...call.args) as Promise<T>;
  }

  private async runMany(script: ScriptName, calls: Call[]): Promise<(Error | null)[]> {
    if (calls.length === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as Commands & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const call of calls) void pipeline[SCRIPTS[script].command](...call.keys, ...call.args);
    const replies = (await pipeline.exec()) ?? [];
    return calls.map((_, index) => (replies[index] ? replies[index][0] : new Error('no reply from Redis')));
  }
}

/** settle.lua's KEYS and ARGV for one settlement (`settle` and `settleMany`). */
function settleCall({ accountId, requestId, costNano, proxy }: Settlement): Call {
  const balance = keys.balance(accountId);
  const spend = proxy ? keys.keySpend(proxy.keyId, proxy.windowId) : `${balance}:nokey`;
  return {
    keys: [
      balance,
      ...keys.reservations(accountId),
      spend,
      ...keys.reservations(proxy ? proxy.keyId : `${accountId}:nokey`),
      keys.late(balance),
      keys.late(spend),
    ],
    args: [requestId, costNano, proxy ? '1' : '0', LATE_SETTLEMENT_MS],
  };
}
