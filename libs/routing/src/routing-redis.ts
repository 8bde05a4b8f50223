import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { coalesceRedisWrites, createRedisClient, REDIS_RECONNECT_OPTIONS, RedisClient, redisDatabaseOf, type RedisTopology } from '@gateway/platform';

/** The RedisTopology of route breakers and quotas (absent: per-process state). */
export const ROUTING_REDIS = Symbol('ROUTING_REDIS');

/**
 * The pub/sub channel of breaker state changes (every replica listens), on database 0. Redis
 * delivers a message to the channel's subscribers whatever database they selected, so on another
 * database the channel's name carries it (`routeStateChannel`): two deployments sharing one Redis
 * on different databases then never open each other's breakers.
 */
export const ROUTE_STATE_CHANNEL = 'gateway:routes:state';

export const routeStateChannel = (database: number): string => (database === 0 ? ROUTE_STATE_CHANNEL : `${ROUTE_STATE_CHANNEL}:db${database}`);

/**
 * The Redis of route breakers and provider quotas, shared by every router and video-worker replica
 * (both give ROUTING_REDIS their own Redis topology: the same Redis, the same keys). Never on the way of a request
 * while it is down: `available` is false unless the connection is ready, and callers then fall
 * back to per-replica state (breakers) or skip the check (quotas) instead of waiting in ioredis'
 * offline queue. Absent (no topology) in unit tests: everything is per-process. Every script and
 * transaction touches one route's keys, which share the route's hash tag (`routeKey`), so all of
 * this works on a Redis Cluster too.
 */
@Injectable()
export class RoutingRedis implements OnApplicationShutdown {
  private readonly logger = new Logger(RoutingRedis.name);
  readonly client?: RedisClient;
  /** A second connection: a subscribed one can issue no other commands. */
  readonly subscriber?: RedisClient;
  /** Where breaker state changes are published and heard (`routeStateChannel` of the database). */
  readonly stateChannel: string = ROUTE_STATE_CHANNEL;
  private wasDown = false;
  private closing = false;

  constructor(@Optional() @Inject(ROUTING_REDIS) topology?: RedisTopology) {
    if (!topology) return;
    this.stateChannel = routeStateChannel(redisDatabaseOf(topology));
    const options = { ...REDIS_RECONNECT_OPTIONS, maxRetriesPerRequest: 1, enableOfflineQueue: false };
    this.client = coalesceRedisWrites(createRedisClient(topology, options));
    this.subscriber = createRedisClient(topology, { ...options, enableOfflineQueue: true });
    for (const connection of [this.client, this.subscriber]) connection.on('error', () => undefined);
    this.client.on('close', () => {
      if (!this.wasDown && !this.closing) this.logger.warn('Redis unreachable: route breakers are per replica and quotas unchecked until it is back');
      this.wasDown = true;
    });
    this.client.on('ready', () => {
      if (this.wasDown) this.logger.log('Redis reachable again: route breakers and quotas are shared again');
      this.wasDown = false;
    });
  }

  get available(): boolean {
    return this.client?.status === 'ready';
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all([this.client?.quit().catch(() => undefined), this.subscriber?.quit().catch(() => undefined)]);
  }
}

export const routeKey = (label: string, what: string): string => `gateway:route:{${label}}:${what}`;
