/**
 * The suite on a Redis Cluster of its own (3 masters, 3 replicas) and a 3-node NATS cluster (from
 * Debian's redis-server and nats-server on free ports): every Redis user works there (admission's
 * one script per request, rate limits, budgets, settlement, revocation epochs, route breakers, the
 * video queue), and a Redis master then a NATS server killed under steady load cost a few seconds of
 * 503 with Retry-After — no 500, no request lost or charged twice, no key over its allocation. The
 * figures are printed (README, "Guarantees").
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { AppProcess, startSuite, stopApps } from '../support/private-infra';
import { spendThroughFailover } from './failover-load';
import { coreScenario } from './core-paths';

// Tooling shared with the other suites: plain JS outside any project.
/* eslint-disable @nx/enforce-module-boundaries */
const { startRedisCluster } = require('../../../../tools/scripts/lib/redis-topologies');
const { startNatsCluster } = require('../../../../tools/scripts/lib/nats-cluster');
/* eslint-enable @nx/enforce-module-boundaries */

describe('on a Redis Cluster (3 masters, 3 replicas) and a NATS cluster (3 servers)', () => {
  let cluster: any;
  let redis: Cluster;
  let nats: any;
  const apps: AppProcess[] = [];
  let edge: AppProcess;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    redis = new Cluster(cluster.env.split(',').map((node: string) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })));
    redis.on('error', () => undefined);
    nats = await startNatsCluster({ size: 3 });
    // REDIS_URL gives only credentials here (none): the cluster's nodes are found from REDIS_CLUSTER_NODES.
    const env = { NATS_URL: nats.url, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: cluster.env };
    edge = await startSuite(apps, env, 'redis-cluster');
  }, 180_000);

  afterAll(async () => {
    redis?.disconnect();
    await stopApps(apps);
    await nats?.stop();
    await cluster?.stop();
  });

  it('carries the core paths: keys, chat and stream, allocation, rate limit, ledger, a video job', async () => {
    await coreScenario(edge.base);
  }, 120_000);

  it("loses the account's Redis master, then a NATS server, under steady load: a few seconds of 503 with Retry-After, the ledger exact, the allocation kept", async () => {
    let victim: any;
    const figures = await spendThroughFailover(
      edge.base,
      'Redis Cluster master and a NATS server killed under load',
      async (accountId) => {
        // The master serving the account's slot: every budget key of the account lives there.
        victim = cluster.masterOfSlot(calculateSlot(`{${accountId}}`));
        await victim.kill();
        await cluster.waitHealthy();
        await nats.nodes[0].kill();
      },
      redis,
      0.015,
    );
    expect(figures.unavailableSeconds).toBeLessThan(20);
    // The killed nodes come back (the Redis one as a replica of the promoted one); both clusters heal.
    await victim.start();
    await cluster.waitHealthy();
    await nats.nodes[0].start();
    await nats.untilHealthy();
  }, 300_000);
});
