import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { REDIS_RECONNECT_OPTIONS, registerLivenessCheck } from './connection-resilience';
import { createRedisClient, isCluster, REDIS_TOPOLOGY, RedisClient, type RedisTopology } from './redis-topology';
import { coalesceRedisWrites } from './redis-write-coalescing';

/**
 * A Redis connection (standalone, Sentinel or Cluster: see RedisTopology) with a readiness probe
 * (edge: rate limits and reservations; metering: settlement; video-worker: its queue).
 */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: RedisClient;
  private readonly failoverListeners: (() => void)[] = [];

  constructor(@Inject(REDIS_TOPOLOGY) readonly topology: RedisTopology) {
    // Commands sent in one turn of the event loop (the admissions of requests that arrived together) leave in one write.
    this.client = coalesceRedisWrites(createRedisClient(topology, { lazyConnect: false, ...REDIS_RECONNECT_OPTIONS }));
    this.client.on('error', () => undefined);
    // 'end' is ioredis giving up for good (never, with its retry strategy) or our own quit on shutdown.
    registerLivenessCheck('redis', () => this.client.status !== 'end');
    this.watchFailovers();
  }

  /**
   * Calls `listener` whenever the data may have changed hands: a reconnect of a single Redis or a
   * Sentinel-managed master (a restart, or a replica promoted), or a new master of some slots of a
   * cluster. Replication is asynchronous, so the latest writes of a master that died may be missing
   * on the replica that took over (BudgetRecovery puts its reservations in flight back).
   */
  onFailover(listener: () => void): void {
    this.failoverListeners.push(listener);
  }

  private watchFailovers(): void {
    const notify = () => this.failoverListeners.forEach((listener) => listener());
    const client = this.client;
    if (isCluster(client)) {
      let masters: string | undefined;
      client.on('refresh', () => {
        const current = [...new Set(client.slots.map((nodes) => nodes?.[0]))].sort().join(',');
        if (masters !== undefined && current !== masters) notify();
        masters = current;
      });
      return;
    }
    let connectedBefore = false;
    client.on('ready', () => {
      if (connectedBefore) notify();
      connectedBefore = true;
    });
  }

  async isReachable(): Promise<boolean> {
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.quit().catch(() => undefined);
  }
}
