import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';

export const REDIS_URL = Symbol('REDIS_URL');

/** A Redis connection with a readiness probe (edge: rate limits and reservations; video-worker: its queue). */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: Redis;

  constructor(@Inject(REDIS_URL) url: string) {
    this.client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.client.on('error', () => undefined);
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
