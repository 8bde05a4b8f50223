import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS_RECONNECT_OPTIONS } from '@gateway/platform';

export const ROUTING_REDIS_URL = Symbol('ROUTING_REDIS_URL');

/** The pub/sub channel of breaker state changes (every replica listens). */
export const ROUTE_STATE_CHANNEL = 'gateway:routes:state';

/**
 * The Redis of route breakers and provider quotas, shared by every router and video-worker replica
 * (both set ROUTING_REDIS_URL to their REDIS_URL: the same Redis, the same keys). Never on the way of a request
 * while it is down: `available` is false unless the connection is ready, and callers then fall
 * back to per-replica state (breakers) or skip the check (quotas) instead of waiting in ioredis'
 * offline queue. Absent (no URL) in unit tests: everything is per-process.
 */
@Injectable()
export class RoutingRedis implements OnApplicationShutdown {
  private readonly logger = new Logger(RoutingRedis.name);
  readonly client?: Redis;
  /** A second connection: a subscribed one can issue no other commands. */
  readonly subscriber?: Redis;
  private wasDown = false;
  private closing = false;

  constructor(@Optional() @Inject(ROUTING_REDIS_URL) url?: string) {
    if (!url) return;
    const options = { ...REDIS_RECONNECT_OPTIONS, maxRetriesPerRequest: 1, enableOfflineQueue: false };
    this.client = new Redis(url, options);
    this.subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
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
