import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { KeysTouchedEvent, Rpc } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { EdgeEnv } from '../config/edge.env';

/** Collects the keys used since the last flush and sends one `keys.touched` per interval, not a write per request. */
@Injectable()
export class KeyUsageTracker implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KeyUsageTracker.name);
  private used = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly services: ServiceClient,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'KEY_USAGE_FLUSH_MS'>,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.env.KEY_USAGE_FLUSH_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  touch(keyId: string): void {
    this.used.add(keyId);
  }

  async flush(): Promise<void> {
    if (this.used.size === 0) return;
    const event: KeysTouchedEvent = { keyIds: [...this.used], at: Math.floor(Date.now() / 1000) };
    this.used = new Set();
    try {
      await this.services.publish(Rpc.keysTouched, event);
    } catch (error) {
      this.logger.warn(`could not publish last_used updates: ${(error as Error).message}`);
    }
  }
}
