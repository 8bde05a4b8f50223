import calculateSlot from 'cluster-key-slot';
import { isCluster, type RedisClient } from '@gateway/platform';
import { loadScript, type ScriptName } from './lua-scripts';

/**
 * Credit budgets in Redis, shared by every edge replica (admit) and metering replica (settle).
 * Amounts are integer nano-credits (money.ts): reservations are upper bounds rounded up, the ledger
 * in PostgreSQL stays the exact record. The scripts are the `.lua` files in ./lua; this class is the
 * one place that names their KEYS and ARGV.
 *
 * Every key one script touches carries the account's hash tag `{<account>}`, so on a Redis Cluster
 * they live in one slot (a script may touch one slot only) and accounts spread over every slot:
 *   bal:{A}                       cached credit balance (primed from the database, TTL BALANCE_TTL_S)
 *   resv:{A}[:total|:expiries]    open reservations on the account (hash, sum, expiry set)
 *   pused:{A}:<key>:<window>      a proxy key's spend in its current window (primed, then incremented)
 *   kw:{A}:<key>:<period>@<zone>[:exp|:late]   the spend of one of a proxy key's budget windows, in
 *                                 buckets (see windows.lua), primed, then counted into
 *   resv:{A}:key:<key>[:total|:expiries]   open reservations on a proxy key
 *   resv:{A}:settled              requests settled in the last SETTLED_MEMORY_MS (restore skips them)
 *   bal:{A}:late, pused:{A}:…:late          settled while the figure was absent (settle.lua)
 *   rl:{A}[:<bucket>]:r|t|me:<minute>       the rate limit's request and token windows, the free poll's marker
 *   refused:{A}:<key>:<window>:<minute>   a refusal by that window was logged in that minute
 *   auth:epoch:{A}                the account's revocation epoch (bumped by the edge on a key change)
 *   budget:generation:{<tag>}     present while Redis holds the budget's state: one per hash slot,
 *                                 its tag chosen to hash to the slot (see generationKey)
 */
export const BALANCE_TTL_S = 60;

/** The hash slots of Redis Cluster (every key hashes to one; standalone Redis has them all). */
const SLOTS = 16_384;

/**
 * How long a settlement made while a cached figure was absent is kept for the next prime: longer
 * than a prime takes from reading the ledger to writing the figure.
 */
const LATE_SETTLEMENT_MS = 15_000;

/**
 * How long a settlement is remembered (`resv:{A}:settled`), so that reservations put back after a
 * failover skip it: longer than a failover and the restore after it take.
 */
const SETTLED_MEMORY_MS = 120_000;

const tag = (accountId: string) => `{${accountId}}`;

const keys = {
  balance: (accountId: string) => `bal:${tag(accountId)}`,
  keySpend: (accountId: string, keyId: string, windowId: string) => `pused:${tag(accountId)}:${keyId}:${windowId}`,
  /** Settlements made while a cached figure was absent, for its next prime (see settle.lua). */
  late: (figure: string) => `${figure}:late`,
  /** The hash, total and expiry set of the reservations on an account, or on one of its keys. */
  reservations: (accountId: string, keyId?: string) => {
    const hash = keyId === undefined ? `resv:${tag(accountId)}` : `resv:${tag(accountId)}:key:${keyId}`;
    return [hash, `${hash}:total`, `${hash}:expiries`];
  },
  /** A proxy key's budget window (budget-windows.ts `windowKey`): its buckets, their expiry set and what settled while it was absent. */
  budgetWindow: (accountId: string, keyId: string, window: string) => {
    const hash = `kw:${tag(accountId)}:${keyId}:${window}`;
    return [hash, `${hash}:exp`, `${hash}:late`];
  },
  /** The account's requests settled lately (sorted by when), which a restore must not put back. */
  settled: (accountId: string) => `resv:${tag(accountId)}:settled`,
  /** The rate limit's windows of an account (or one of its named buckets) in one minute. */
  window: (accountId: string, bucket: string | undefined, kind: 'r' | 't' | 'me', minute: number) =>
    `rl:${tag(accountId)}${bucket ? `:${bucket}` : ''}:${kind}:${minute}`,
};

/** The account's revocation epoch: bumped on a key change, compared by the admission scripts. */
export const revocationEpochKey = (accountId: string): string => `auth:epoch:${tag(accountId)}`;

/**
 * The generation marker of one hash slot. Present while Redis holds the budget's state. It is
 * written (with a new value) only once the figures can be trusted again after Redis lost everything
 * (see BudgetRecovery in the edge), and it has no TTL: a Redis (or, on a cluster, a shard: master
 * and replicas) restarted empty, or flushed, has no marker, and admit then answers 'cold-store' for
 * every request of its slots — nothing is admitted on figures primed while reservations in flight
 * and the metering backlog were missing from both Redis and the ledger. One marker per slot because
 * the admission script can read only keys of the account's slot; a short tag per slot, found once
 * per process, names it.
 */
function generationKey(slot: number): string {
  return `budget:generation:{${slotTags()[slot]}}`;
}

let tags: string[] | undefined;

/** For each hash slot, the shortest base-36 counter that hashes to it (a few hundred thousand CRC16s, once). */
function slotTags(): string[] {
  if (tags) return tags;
  const found: string[] = new Array<string>(SLOTS);
  let missing = SLOTS;
  for (let counter = 0; missing > 0; counter++) {
    const candidate = counter.toString(36);
    const slot = calculateSlot(candidate);
    if (found[slot] === undefined) {
      found[slot] = candidate;
      missing--;
    }
  }
  tags = found;
  return found;
}

const accountGenerationKey = (accountId: string) => generationKey(calculateSlot(tag(accountId)));

export interface ReserveRequest {
  accountId: string;
  requestId: string;
  costNano: number;
  /** How long an unsettled reservation holds (a request whose usage event never comes). */
  ttlMs: number;
  proxy?: {
    keyId: string;
    windowId: string;
    allocationNano: number;
    /** The key's budget windows beyond its allocation (`windowKey`) and their amounts, read at `at` (ms). */
    windows?: { key: string; amountNano: number }[];
    at?: number;
  };
  /**
   * A DevPass key's token windows instead: `costNano` is then the request's worst case in tokens,
   * held against the key and its windows only (no credits are checked or held).
   */
  devpass?: { keyId: string; windows: { key: string; amountNano: number }[]; at: number };
}

/**
 * For a proxy key: the budget with least room (`window` 0 is the allocation, 1… the key's budget
 * windows in order), what it had left before the request, and when its oldest bucket stops counting
 * (ms; 0 without one, or for the allocation).
 */
export interface TightestBudget {
  window: number;
  left: number;
  oldest: number;
}

export type ReserveResult =
  | ({ ok: true } & { tightest?: TightestBudget })
  | { ok: false; reason: 'credits' | 'allocation'; available: number }
  | { ok: false; reason: 'window'; available: number; window: number; oldest: number }
  | { ok: false; reason: 'cold-balance' | 'cold-allocation' | 'cold-store' };

/** The edge's gate before any reservation: the revocation epoch and the plan's one-minute windows. */
export interface AdmitGate {
  accountId: string;
  /** The epoch the caller's principal was filled under ('' skips the check). */
  expectedEpoch: string;
  /** Whose windows: the account's, or one of its named buckets'; and the minute (ms since the epoch / 60 000). */
  bucket?: string;
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
  proxy?: {
    keyId: string;
    windowId: string;
    /** The key's budget windows (`windowKey`): the bucket the charge counts in and when that stops (ms). */
    windows?: { key: string; member: number; expiry: number }[];
  };
  /** A DevPass key's token windows instead: `costNano` is then the tokens used (no credits move). */
  devpass?: { keyId: string; windows?: { key: string; member: number; expiry: number }[] };
}

/** A budget window's spend as the ledger holds it, to load into Redis (BudgetStore.primeWindows). */
export interface PrimedWindow {
  key: string;
  buckets: { member: number; expiry: number; amountNano: number }[];
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

/** Scripts without a fixed number of keys (a proxy key's budget windows add theirs) get it as their first argument. */
const SCRIPTS: Record<ScriptName, { command: string; numberOfKeys?: number }> = {
  admit: { command: 'billingAdmit' },
  'rate-limit': { command: 'billingRateLimit', numberOfKeys: 4 },
  settle: { command: 'billingSettle' },
  prime: { command: 'billingPrime', numberOfKeys: 2 },
  'prime-window': { command: 'billingPrimeWindow', numberOfKeys: 3 },
  restore: { command: 'billingRestore', numberOfKeys: 7 },
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
    private readonly redis: RedisClient,
    options: { now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
    // Found at startup (some 20 ms of CRC16s, once per process), not on the first request's path.
    slotTags();
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
    const { accountId, requestId, costNano, ttlMs, devpass } = request;
    // A DevPass key's token windows go where a proxy key's are, without an allocation.
    const proxy = request.proxy ?? (devpass ? { ...devpass, windowId: 'none', allocationNano: -1 } : undefined);
    const windows = proxy?.windows ?? [];
    const [state, available, requests, tokens, window, left, oldest] = await this.run<[string, number, number, number, number?, number?, number?]>('admit', {
      keys: [
        keys.balance(accountId),
        ...keys.reservations(accountId),
        // A non-proxy key reads none of these (a negative allocation): stand-ins of the same account.
        request.proxy ? keys.keySpend(accountId, request.proxy.keyId, request.proxy.windowId) : `${keys.balance(accountId)}:nokey`,
        ...keys.reservations(accountId, proxy ? proxy.keyId : ''),
        revocationEpochKey(gate.accountId),
        keys.window(gate.accountId, gate.bucket, 'r', gate.minute),
        keys.window(gate.accountId, gate.bucket, 't', gate.minute),
        accountGenerationKey(accountId),
        ...windows.flatMap((entry) => keys.budgetWindow(accountId, proxy!.keyId, entry.key).slice(0, 2)),
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
        devpass ? 'tokens' : 'credits',
        proxy?.at ?? this.now(),
        ...windows.map((entry) => entry.amountNano),
      ],
    });
    const counted = { requests: Number(requests), tokens: Number(tokens) };
    if (state === 'ok') {
      return proxy ? { ok: true, tightest: { window: Number(window), left: Number(left), oldest: Number(oldest) }, ...counted } : { ok: true, ...counted };
    }
    if (state === 'credits' || state === 'allocation') return { ok: false, reason: state, available: Number(available), ...counted };
    if (state === 'window') return { ok: false, reason: 'window', available: Number(available), window: Number(window), oldest: Number(oldest), ...counted };
    return { ok: false, reason: state as 'cold-balance' | 'cold-allocation' | 'cold-store' | 'stale' | 'requests' | 'tokens', ...counted };
  }

  /** The gate alone (revocation epoch and rate limit), for a request that reserves nothing. */
  async rateLimit(check: RateLimitCheck): Promise<RateLimitResult> {
    const { accountId, bucket, minute } = check;
    const [state, requests, tokens] = await this.run<[RateLimitResult['state'], number, number]>('rate-limit', {
      keys: [
        revocationEpochKey(accountId),
        keys.window(accountId, bucket, 'r', minute),
        keys.window(accountId, bucket, 't', minute),
        keys.window(accountId, bucket, 'me', minute),
      ],
      args: [check.expectedEpoch, check.requestsPerMinute, check.tokensPerMinute, check.tokens, check.freePoll ? '1' : '0'],
    });
    return { state, requests: Number(requests), tokens: Number(tokens) };
  }

  /**
   * The generation markers: null when Redis lost the budget's state (or never had it). One marker
   * per data set is read — standalone and Sentinel have one; on a cluster, the marker of one slot of
   * each master (a shard that lost its data lost all its slots' markers). Several values (a shard
   * rebuilt apart from the others) come back joined.
   */
  async generation(): Promise<string | null> {
    const values = await Promise.all(this.probeSlots().map((slot) => this.redis.get(generationKey(slot))));
    if (values.some((value) => value === null)) return null;
    return [...new Set(values)].sort().join(',');
  }

  /**
   * Declares Redis's figures trustworthy again: writes the marker of every slot unless one is there
   * (another replica got there first, or the slot's shard never lost it). Resolves with the
   * generation now in force.
   */
  async warm(generation: string): Promise<string> {
    const batch = 1024;
    for (let first = 0; first < SLOTS; first += batch) {
      const slots = Array.from({ length: Math.min(batch, SLOTS - first) }, (_, index) => first + index);
      if (isCluster(this.redis)) {
        await Promise.all(slots.map((slot) => this.redis.set(generationKey(slot), generation, 'NX')));
      } else {
        const pipeline = this.redis.pipeline();
        for (const slot of slots) pipeline.set(generationKey(slot), generation, 'NX');
        const failed = ((await pipeline.exec()) ?? []).find(([error]) => error);
        if (failed) throw failed[0] as Error;
      }
    }
    return (await this.generation()) ?? generation;
  }

  /** One slot per data set: slot 0 on a single Redis; the first slot of each master of a cluster. */
  private probeSlots(): number[] {
    if (!isCluster(this.redis)) return [0];
    const owners = new Map<string, number>();
    this.redis.slots.forEach((nodes, slot) => {
      const master = nodes?.[0];
      if (master !== undefined && !owners.has(master)) owners.set(master, slot);
    });
    return owners.size > 0 ? [...owners.values()] : [0];
  }

  /** Puts back reservations Redis lost, in one round trip; one already there is left alone. */
  async restore(reservations: RestoredReservation[]): Promise<void> {
    const now = this.now();
    const calls = reservations.map(({ accountId, requestId, costNano, expiresAt, keyId }) => ({
      keys: [...keys.reservations(accountId), ...keys.reservations(accountId, keyId ?? ''), keys.settled(accountId)],
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
  primeKeySpend(accountId: string, keyId: string, windowId: string, usedNano: number, ttlSeconds: number): Promise<void> {
    return this.prime(keys.keySpend(accountId, keyId, windowId), usedNano, ttlSeconds);
  }

  /**
   * Loads a proxy key's budget windows from the ledger, each unless Redis has it, for `ttlMs`: the
   * figures are read from the ledger again after that (what settled meanwhile is kept, see settle.lua).
   */
  async primeWindows(accountId: string, keyId: string, windows: PrimedWindow[], ttlMs: number): Promise<void> {
    await Promise.all(
      windows.map((window) =>
        this.run('prime-window', {
          keys: keys.budgetWindow(accountId, keyId, window.key),
          args: [ttlMs, ...window.buckets.flatMap((bucket) => [bucket.member, bucket.expiry, bucket.amountNano])],
        }),
      ),
    );
  }

  /**
   * Drops the cached balance (and a proxy key's spend in `windowId` and its budget windows), with
   * what settled while they were absent, after the ledger took back a charge: the next request
   * loads them from the ledger.
   */
  async forget(accountId: string, proxy?: { keyId: string; windowId: string; windows?: string[] }): Promise<void> {
    const figures = [keys.balance(accountId), ...(proxy ? [keys.keySpend(accountId, proxy.keyId, proxy.windowId)] : [])];
    const windowKeys = (proxy?.windows ?? []).flatMap((window) => keys.budgetWindow(accountId, proxy!.keyId, window));
    // One slot (the account's tag): one command, on a cluster too.
    await this.redis.del(...figures.flatMap((figure) => [figure, keys.late(figure)]), ...windowKeys);
  }

  /**
   * Whether this is the first refusal by a key's budget window in this minute (then it is logged):
   * a client retrying a spent key in a loop must not write a ledger row per attempt.
   */
  async firstRefusal(accountId: string, keyId: string, window: string, minute: number): Promise<boolean> {
    return (await this.redis.set(`refused:${tag(accountId)}:${keyId}:${window}:${minute}`, '1', 'EX', 120, 'NX')) === 'OK';
  }

  /**
   * Drops a reservation whose request will produce no usage event (it never reached the router):
   * of the account and a proxy key, or (`tokens`) of a DevPass key's token windows.
   */
  async release(accountId: string, requestId: string, keyId?: string, tokens = false): Promise<void> {
    if (tokens && keyId) return this.settle({ accountId, requestId, costNano: 0, devpass: { keyId } });
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
    return (this.redis as unknown as Commands)[SCRIPTS[script].command](...argumentsOf(script, call)) as Promise<T>;
  }

  private async runMany(script: ScriptName, calls: Call[]): Promise<(Error | null)[]> {
    if (calls.length === 0) return [];
    if (isCluster(this.redis)) {
      // A cluster pipeline must stay within one slot: one call each (ioredis groups them per node).
      const settled = await Promise.allSettled(calls.map((call) => this.run(script, call)));
      return settled.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error) : null));
    }
    const pipeline = this.redis.pipeline() as unknown as Commands & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const call of calls) void pipeline[SCRIPTS[script].command](...argumentsOf(script, call));
    const replies = (await pipeline.exec()) ?? [];
    return calls.map((_, index) => (replies[index] ? replies[index][0] : new Error('no reply from Redis')));
  }
}

/** A script's arguments: the number of keys first when the script has no fixed number. */
function argumentsOf(script: ScriptName, call: Call): (string | number)[] {
  return SCRIPTS[script].numberOfKeys === undefined ? [call.keys.length, ...call.keys, ...call.args] : [...call.keys, ...call.args];
}

/** settle.lua's KEYS and ARGV for one settlement (`settle` and `settleMany`). */
function settleCall({ accountId, requestId, costNano, proxy: credits, devpass }: Settlement): Call {
  const balance = keys.balance(accountId);
  const proxy = credits ?? (devpass ? { ...devpass, windowId: 'none' } : undefined);
  const spend = credits ? keys.keySpend(accountId, credits.keyId, credits.windowId) : `${balance}:nokey`;
  return {
    keys: [
      balance,
      ...keys.reservations(accountId),
      spend,
      ...keys.reservations(accountId, proxy ? proxy.keyId : ''),
      keys.late(balance),
      keys.late(spend),
      keys.settled(accountId),
      ...(proxy?.windows ?? []).flatMap((window) => keys.budgetWindow(accountId, proxy!.keyId, window.key)),
    ],
    args: [
      requestId,
      costNano,
      credits ? '1' : devpass ? '2' : '0',
      LATE_SETTLEMENT_MS,
      SETTLED_MEMORY_MS,
      ...(proxy?.windows ?? []).flatMap((window) => [window.member, window.expiry]),
    ],
  };
}
