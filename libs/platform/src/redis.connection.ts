import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS_RECONNECT_OPTIONS, registerLivenessCheck } from './connection-resilience';

export const REDIS_URL = Symbol('REDIS_URL');

/** A Redis connection with a readiness probe (edge: rate limits and reservations; video-worker: its queue). */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: Redis;

  constructor(@Inject(REDIS_URL) url: string) {
    this.client = new Redis(url, { lazyConnect: false, ...REDIS_RECONNECT_OPTIONS });
    this.client.on('error', () => undefined);
    // 'end' is ioredis giving up for good (never, with its retry strategy) or our own quit on shutdown.
    registerLivenessCheck('redis', () => this.client.status !== 'end');
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
