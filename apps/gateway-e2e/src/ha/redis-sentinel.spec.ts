/**
 * The suite on a Sentinel-managed Redis of its own (a master, a replica, three sentinels, from
 * Debian's redis-server on free ports): the core paths work through it, and the master killed under
 * steady load is replaced by the replica within seconds — 503 with Retry-After meanwhile, no 500,
 * no request lost or charged twice, no key over its allocation (README, "Guarantees").
 */
import Redis from 'ioredis';
import { AppProcess, RestartableServer, startSuite, stopApps } from '../support/private-infra';
import { coreScenario } from './core-paths';
import { spendThroughFailover } from './failover-load';

// Tooling shared with the other suites: plain JS outside any project.
/* eslint-disable @nx/enforce-module-boundaries */
const { startRedisSentinel, waitFor } = require('../../../../tools/scripts/lib/redis-topologies');
/* eslint-enable @nx/enforce-module-boundaries */

describe('on Redis with Sentinel (1 master, 1 replica, 3 sentinels)', () => {
  let sentinel: any;
  let redis: Redis;
  let nats: RestartableServer;
  const apps: AppProcess[] = [];
  let edge: AppProcess;

  beforeAll(async () => {
    sentinel = await startRedisSentinel({ name: 'gateway' });
    redis = new Redis({ sentinels: sentinel.sentinels.map((node: any) => ({ host: '127.0.0.1', port: node.port })), name: 'gateway' });
    redis.on('error', () => undefined);
    nats = await RestartableServer.nats();
    // REDIS_URL gives the credentials (none) and the database; the master is found through the sentinels.
    const env = { NATS_URL: nats.url, REDIS_URL: 'redis://127.0.0.1:6379/0', REDIS_SENTINELS: sentinel.env, REDIS_SENTINEL_NAME: 'gateway' };
    edge = await startSuite(apps, env, 'redis-sentinel');
  }, 180_000);

  afterAll(async () => {
    redis?.disconnect();
    await stopApps(apps);
    await nats?.stop();
    await sentinel?.stop();
  });

  it('carries the core paths: keys, chat and stream, allocation, rate limit, ledger, a video job', async () => {
    await coreScenario(edge.base);
  }, 120_000);

  it('fails over to the replica under steady load: a few seconds of 503 with Retry-After, the ledger exact, the allocation kept', async () => {
    const figures = await spendThroughFailover(
      edge.base,
      'Sentinel master killed under load',
      async () => {
        await sentinel.master.kill();
        await waitFor('the sentinels to promote the replica', () => sentinel.currentMasterPort() === sentinel.replica.port, 60);
      },
      redis,
    );
    expect(figures.unavailableSeconds).toBeLessThan(15);
  }, 240_000);
});
