import { Injectable } from '@nestjs/common';
import { revocationEpochKey } from '@gateway/billing';
import { RedisConnection } from '@gateway/platform';

/**
 * Per-account revocation epochs in Redis (the key the budget scripts compare, `revocationEpochKey`), shared by every edge replica: the barrier that makes a
 * key change hold on all replicas once its call has answered (docs/api.md, "Guarantees").
 * A revoking call bumps the account's epoch before it answers; every request served from a cache
 * hit has its rate-limit script compare the epoch the entry was filled under with the current one
 * (in the same round trip) and asks key-service again when they differ. `keys.changed` broadcasts still drop entries early, but correctness no longer waits on them.
 */
@Injectable()
export class RevocationEpochs {
  constructor(private readonly redis: RedisConnection) {}

  /** The account's current epoch ('0' before its first change); throws when Redis is unreachable. */
  async current(accountId: string): Promise<string> {
    return (await this.redis.client.get(revocationEpochKey(accountId))) ?? '0';
  }

  async bump(accountId: string): Promise<void> {
    await this.redis.client.incr(revocationEpochKey(accountId));
  }
}
