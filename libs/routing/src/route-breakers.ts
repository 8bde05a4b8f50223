import { Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { ModelCatalog, ResolvedRoute } from '@gateway/catalog';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import { randomUUID } from 'node:crypto';
import { ROUTE_STATE_CHANNEL, routeKey, RoutingRedis } from './routing-redis';

export type BreakerState = 'closed' | 'half_open' | 'open';
/** `gateway_route_state` values. */
export const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * What a call may do with a route right now. `probe`: the one trial request of a half-open breaker.
 * `skip` says whether the route is out because its upstream rate-limited us (a 429 with
 * Retry-After) rather than because it failed.
 */
export type Admission = { kind: 'pass' } | { kind: 'probe' } | { kind: 'skip'; retryAfterMs: number; rateLimited: boolean };

interface Breaker {
  /** 0: closed. Else open until then (Unix ms), half-open after. */
  openUntil: number;
  /** Opened by the upstream's 429 with Retry-After (a rate limit), not by failures. */
  rateLimited: boolean;
  /** This replica holds the half-open probe. */
  probing: boolean;
  /** Failure times, while Redis is unavailable (per-replica counting). */
  failures: number[];
}

/** A probe that never reports back (the process died) frees its claim after this. */
const PROBE_CLAIM_MS = 60_000;
/** How long startup waits for Redis to read the breakers' states. */
const STARTUP_READ_MS = 3_000;
/** How long a breaker's state outlives its opening in Redis (replicas joining later still see it). */
const STATE_TTL_MS = 10 * 60_000;

/**
 * Counts failures within the window; at the threshold the route opens until now + cooldown, for
 * failures (the rate-limit mark goes). Returns the open-until time, 0 when the route stays closed.
 * KEYS: failures, state, rate-limit mark. ARGV: now, window ms, threshold, cooldown ms, channel, label, state ttl ms.
 */
const RECORD_FAILURE = `
local now = tonumber(ARGV[1])
local open = tonumber(redis.call('GET', KEYS[2]) or '0')
if open > now then return open end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n < tonumber(ARGV[3]) then return 0 end
local untilMs = now + tonumber(ARGV[4])
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SET', KEYS[2], untilMs, 'PX', tonumber(ARGV[4]) + tonumber(ARGV[7]))
redis.call('PUBLISH', ARGV[5], cjson.encode({label = ARGV[6], openUntil = untilMs}))
return untilMs
`;

/**
 * Per-route circuit breakers, shared by every router replica through Redis, yet read in-process:
 * a closed route costs no Redis call. State changes are written to Redis and published on the
 * database's state channel (`routeStateChannel`), which every replica applies; a replica reads the states when it connects
 * (startup, reconnect). Without Redis every replica keeps its own breakers.
 */
@Injectable()
export class RouteBreakers implements OnModuleInit {
  private readonly logger = new Logger(RouteBreakers.name);
  private readonly breakers = new Map<string, Breaker>();
  private readonly replica = randomUUID();

  constructor(
    @Optional() private readonly redis?: RoutingRedis,
    @Optional() private readonly catalog?: ModelCatalog,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {}

  /** The pub/sub channel of this database's breaker states (see `routeStateChannel`). */
  private get channel(): string {
    return this.redis?.stateChannel ?? ROUTE_STATE_CHANNEL;
  }

  /**
   * Subscribes to state changes and reads the current states before the router serves (bounded by
   * STARTUP_READ_MS: Redis down at startup means per-replica breakers, not a router that waits).
   */
  async onModuleInit(): Promise<void> {
    const labels = (this.catalog?.all() ?? []).flatMap((model) => model.routes.map((route) => route.label));
    this.metrics?.gauge(Metrics.routeState, (gauge) => {
      for (const label of labels) gauge.set({ route: label }, BREAKER_STATE_VALUE[this.state(label)]);
    });
    const client = this.redis?.client;
    const subscriber = this.redis?.subscriber;
    if (!client || !subscriber) return;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.applyMessage(message);
    });
    // ioredis subscribes again by itself after a reconnect; the states are read again each time.
    const subscribed = subscriber.subscribe(this.channel).catch(() => undefined);
    client.on('ready', () => void this.readStates(labels));
    let timer: NodeJS.Timeout | undefined;
    const initial = new Promise<void>((resolve) => {
      const read = () => void subscribed.then(() => this.readStates(labels)).finally(resolve);
      if (client.status === 'ready') read();
      else client.once('ready', read);
      timer = setTimeout(resolve, STARTUP_READ_MS);
    });
    await initial;
    clearTimeout(timer);
  }

  state(label: string, now = Date.now()): BreakerState {
    const breaker = this.breakers.get(label);
    if (!breaker || breaker.openUntil === 0) return 'closed';
    return now < breaker.openUntil ? 'open' : 'half_open';
  }

  /** In-process unless the route is half-open, when claiming its one probe asks Redis. */
  async admit(route: ResolvedRoute, now = Date.now()): Promise<Admission> {
    const breaker = this.breakers.get(route.label);
    if (!breaker || breaker.openUntil === 0) return { kind: 'pass' };
    const rateLimited = breaker.rateLimited;
    if (now < breaker.openUntil) return { kind: 'skip', retryAfterMs: breaker.openUntil - now, rateLimited };
    if (breaker.probing) return { kind: 'skip', retryAfterMs: 1000, rateLimited };
    breaker.probing = true;
    if (this.redis?.available) {
      const claimed = await this.redis.client!.set(routeKey(route.label, 'probe'), this.replica, 'PX', PROBE_CLAIM_MS, 'NX').catch(() => 'OK');
      if (claimed !== 'OK') {
        // Another replica probes it; this one waits for its verdict (published).
        breaker.probing = false;
        return { kind: 'skip', retryAfterMs: 1000, rateLimited };
      }
    }
    return { kind: 'probe' };
  }

  /** The route answered (whatever it said about the request): a probe closes its breaker. */
  succeeded(route: ResolvedRoute, admission: Admission): void {
    const breaker = this.breakers.get(route.label);
    if (admission.kind !== 'probe' && (!breaker || breaker.openUntil === 0)) return;
    this.change(route.label, 0);
  }

  /** A probe that ended without a verdict (cancelled, skipped for quota) frees its claim. */
  released(route: ResolvedRoute, admission: Admission): void {
    if (admission.kind !== 'probe') return;
    const breaker = this.breakers.get(route.label);
    if (breaker) breaker.probing = false;
    if (this.redis?.available) void this.redis.client!.del(routeKey(route.label, 'probe')).catch(() => undefined);
  }

  /**
   * A provider failure (connect error, timeout, 429, 5xx, refused key). Returns true when the
   * route is now open, so the caller stops retrying it. A 429 with Retry-After opens the route for
   * that long, marked as rate-limited.
   */
  async failed(route: ResolvedRoute, admission: Admission, retryAfterSeconds?: number, now = Date.now()): Promise<boolean> {
    const policy = route.breakerPolicy;
    if (admission.kind === 'probe' || retryAfterSeconds !== undefined) {
      const openMs = retryAfterSeconds !== undefined ? Math.max(1000, retryAfterSeconds * 1000) : policy.cooldownMs;
      this.change(route.label, now + openMs, retryAfterSeconds !== undefined);
      return true;
    }
    const breaker = this.breaker(route.label);
    if (this.redis?.available) {
      try {
        const keys = [routeKey(route.label, 'failures'), routeKey(route.label, 'state'), routeKey(route.label, 'rate_limited')];
        const args = [now, policy.windowMs, policy.failures, policy.cooldownMs, this.channel, route.label, STATE_TTL_MS];
        const openUntil = Number(await this.redis.client!.eval(RECORD_FAILURE, keys.length, ...keys, ...args));
        if (openUntil > now) {
          if (breaker.openUntil !== openUntil) this.logger.warn(`route ${route.label} opened until ${new Date(openUntil).toISOString()}`);
          Object.assign(breaker, { openUntil, rateLimited: false, probing: false });
          return true;
        }
        return false;
      } catch {
        // Redis failed just now: count in-process below.
      }
    }
    breaker.failures = breaker.failures.filter((at) => at > now - policy.windowMs);
    breaker.failures.push(now);
    if (breaker.failures.length < policy.failures) return false;
    this.change(route.label, now + policy.cooldownMs);
    return true;
  }

  private breaker(label: string): Breaker {
    let breaker = this.breakers.get(label);
    if (!breaker) this.breakers.set(label, (breaker = { openUntil: 0, rateLimited: false, probing: false, failures: [] }));
    return breaker;
  }

  /** Opens (until `openUntil`, for a rate limit or for failures) or closes (0) a route here, in Redis and on every replica. */
  private change(label: string, openUntil: number, rateLimited = false): void {
    const breaker = this.breaker(label);
    const was = breaker.openUntil;
    Object.assign(breaker, { openUntil, rateLimited, probing: false, failures: [] });
    if (openUntil === 0 && was !== 0) this.logger.log(`route ${label} closed again`);
    if (openUntil !== 0) this.logger.warn(`route ${label} opened until ${new Date(openUntil).toISOString()}${rateLimited ? ' (rate limited)' : ''}`);
    if (!this.redis?.available) return;
    const client = this.redis.client!;
    const state = routeKey(label, 'state');
    const mark = routeKey(label, 'rate_limited');
    const ttlMs = openUntil - Date.now() + STATE_TTL_MS;
    const write =
      openUntil === 0
        ? client.multi().del(state, mark, routeKey(label, 'failures'), routeKey(label, 'probe'))
        : client.multi().set(state, String(openUntil), 'PX', ttlMs).del(routeKey(label, 'probe'));
    if (openUntil !== 0) void (rateLimited ? write.set(mark, '1', 'PX', ttlMs) : write.del(mark));
    void write
      .publish(this.channel, JSON.stringify({ label, openUntil, rateLimited }))
      .exec()
      .catch(() => undefined);
  }

  private applyMessage(message: string): void {
    try {
      const { label, openUntil, rateLimited } = JSON.parse(message) as { label?: unknown; openUntil?: unknown; rateLimited?: unknown };
      if (typeof label !== 'string' || typeof openUntil !== 'number') return;
      Object.assign(this.breaker(label), { openUntil, rateLimited: rateLimited === true, probing: false, failures: [] });
    } catch {
      // not ours
    }
  }

  private async readStates(labels: string[]): Promise<void> {
    if (labels.length === 0 || !this.redis?.client) return;
    try {
      // One MGET per route: a route's keys share its hash tag, different routes' may be on other cluster nodes.
      const client = this.redis.client;
      const values = await Promise.all(labels.map((label) => client.mget(routeKey(label, 'state'), routeKey(label, 'rate_limited'))));
      labels.forEach((label, index) => {
        const openUntil = Number(values[index][0] ?? 0) || 0;
        const rateLimited = openUntil !== 0 && values[index][1] === '1';
        const breaker = this.breaker(label);
        if (breaker.openUntil !== openUntil) Object.assign(breaker, { openUntil, probing: false });
        breaker.rateLimited = rateLimited;
      });
    } catch {
      // Redis went away again: the next 'ready' reads them.
    }
  }
}
