/**
 * The suite on a 3-node NATS cluster with JetStream (tools/scripts/lib/nats-cluster.js, Debian's
 * nats-server on free ports), as platform teams run it: services of this test's own given all three
 * servers (`NATS_URL` names each), with the suite's Redis and PostgreSQL. The usage stream, the
 * dead-letter stream and the metering consumer are replicated on all three; the core paths work;
 * one server killed outright (SIGKILL) under steady load costs only retryable answers (2xx, or a
 * 503/429 with `Retry-After`; a stream cut mid-way ends with a 503's error event), never a 500, and
 * the ledger then holds exactly one entry per 2xx with no key over its allocation. The server
 * started again rejoins and the cluster is whole. The figures are printed (README, "Guarantees").
 *
 * The server killed is the one the router takes its requests on, with the usage stream's leader and
 * the metering consumer's moved onto it first (when a few step-downs get them there), so that one
 * kill cuts answers in flight and takes the JetStream leaders with it.
 */
import Redis from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { join } from 'node:path';
import { api, createAccount, ledgerEntry } from '../support/api';
import { AppProcess, startSuite, stopApps } from '../support/private-infra';
import { suiteInfo } from '../support/suite-info';
import { coreScenario } from './core-paths';
import { spendThroughFailover } from './failover-load';

// Tooling shared with `npm start`: plain JS outside any project, so the boundary rule does not apply.
/* eslint-disable @nx/enforce-module-boundaries */
const { startNatsCluster } = require('../../../../tools/scripts/lib/nats-cluster');
/* eslint-enable @nx/enforce-module-boundaries */

interface ClusterNode {
  name: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  clients(): Promise<string[] | null>;
}
interface Cluster {
  url: string;
  nodes: ClusterNode[];
  untilHealthy(ms?: number): Promise<void>;
  stop(): Promise<void>;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, boundMs: number): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The servers holding a stream's or consumer's copies that are current, its leader first. */
const currentCopies = (info: { cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] } }): string[] => [
  info.cluster?.leader ?? '',
  ...(info.cluster?.replicas ?? []).filter((replica) => replica.current).map((replica) => replica.name),
];

describe('on a NATS cluster (3 servers, JetStream replicated)', () => {
  let cluster: Cluster;
  let admin: NatsConnection;
  let redis: Redis;
  const apps: AppProcess[] = [];
  let edge: AppProcess;
  let killed: ClusterNode | undefined;

  beforeAll(async () => {
    cluster = await startNatsCluster({ name: 'e2e', logDir: join(suiteInfo().logDir, 'nats-cluster') });
    const env = { NATS_URL: cluster.url };
    edge = await startSuite(apps, env, 'nats-cluster', {
      perApp: { 'inference-router': { UPSTREAM_RETRY_BASE_MS: '20' }, 'metering-service': { METERING_ACK_WAIT_MS: '2000' } },
    });
    admin = await connect({ servers: cluster.url.split(','), name: 'gateway-e2e-nats-cluster', maxReconnectAttempts: -1 });
    redis = new Redis(suiteInfo().env.REDIS_URL);
  }, 180_000);

  afterAll(async () => {
    redis?.disconnect();
    await stopApps(apps);
    await admin?.close();
    await cluster?.stop();
  });

  it('replicates the usage stream, the dead-letter stream and the metering consumer on all three servers', async () => {
    const manager = await admin.jetstreamManager();
    for (const name of ['USAGE', 'USAGE_DEAD']) {
      expect({ name, replicas: (await manager.streams.info(name)).config.num_replicas }).toEqual({ name, replicas: 3 });
    }
    const everyServer = cluster.nodes
      .map((node) => node.name)
      .sort()
      .join();
    await until(
      'USAGE current on every server',
      async () =>
        currentCopies(await manager.streams.info('USAGE'))
          .sort()
          .join() === everyServer
          ? true
          : undefined,
      20_000,
    );
    await until(
      'the metering consumer current on every server',
      async () =>
        currentCopies(await manager.consumers.info('USAGE', 'metering'))
          .sort()
          .join() === everyServer
          ? true
          : undefined,
      20_000,
    );
  });

  it('carries the core paths: keys, chat and stream, allocation, rate limit, ledger, a video job', async () => {
    await coreScenario(edge.base);
  }, 120_000);

  it('loses a server under steady load: only 2xx or retryable answers, the ledger exact, the allocation kept', async () => {
    const target = await routerServer();
    const leaders = await moveLeadersTo(target);
    let connections: string[] | null = null;
    const manager = await admin.jetstreamManager();
    const figures = await spendThroughFailover(
      edge.base,
      'NATS server killed under load',
      async () => {
        connections = await target.clients();
        await target.kill();
        killed = target;
        // Clients are on the servers left within milliseconds; JetStream takes a leader election.
        await until(
          'a new USAGE leader',
          async () => {
            const leader = (await manager.streams.info('USAGE')).cluster?.leader;
            return leader && leader !== target.name ? leader : undefined;
          },
          30_000,
        );
      },
      redis,
      // Enough for the load to outlast the election: about a thousand requests.
      0.05,
    );
    console.log(
      `NATS server ${target.name} killed with ${leaders} and these connections on it: ${connections ?? '?'}; ` +
        `${figures.cut} streams cut mid-way (ended with a 503 event, billed what they relayed)`,
    );
    expect(figures.unavailableSeconds).toBeLessThan(15);
  }, 240_000);

  it('takes the killed server back: it rejoins, its copies catch up, requests are metered', async () => {
    expect(killed).toBeDefined();
    await killed!.start();
    await cluster.untilHealthy(60_000);
    const manager = await admin.jetstreamManager();
    expect(currentCopies(await manager.streams.info('USAGE')).sort()).toEqual(cluster.nodes.map((node) => node.name).sort());
    const owner = createAccount('pro', '10');
    const chat = await api('POST', '/v1/chat/completions', {
      key: owner.masterKey,
      base: edge.base,
      body: { model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'healed?' }] },
    });
    expect(chat.status).toBe(200);
    const requestId = chat.headers.get('x-request-id') as string;
    expect(await ledgerEntry(owner.masterKey, requestId, { base: edge.base, timeoutMs: 30_000 })).toMatchObject({ request_id: requestId, status: 'success' });
  }, 120_000);

  /** The server the router takes its requests on: killing it cuts the answers in flight. */
  async function routerServer(): Promise<ClusterNode> {
    for (const node of cluster.nodes) if ((await node.clients())?.includes('inference-router')) return node;
    throw new Error('no NATS server has the router connected');
  }

  /**
   * Steps the usage stream's leader and the metering consumer's down until both are on `target`
   * (a new leader is picked at random, so a few tries), and says where they ended up.
   */
  async function moveLeadersTo(target: ClusterNode): Promise<string> {
    const manager = await admin.jetstreamManager();
    const leaderOf = {
      'USAGE leader': async () => (await manager.streams.info('USAGE')).cluster?.leader,
      'metering consumer leader': async () => (await manager.consumers.info('USAGE', 'metering')).cluster?.leader,
    };
    const stepDown = {
      'USAGE leader': '$JS.API.STREAM.LEADER.STEPDOWN.USAGE',
      'metering consumer leader': '$JS.API.CONSUMER.LEADER.STEPDOWN.USAGE.metering',
    };
    const where: string[] = [];
    for (const role of Object.keys(leaderOf) as (keyof typeof leaderOf)[]) {
      for (let attempt = 0; attempt < 12; attempt++) {
        const leader = await until(`a ${role}`, leaderOf[role], 20_000);
        if (leader === target.name) break;
        await admin.request(stepDown[role], undefined, { timeout: 5_000 });
        await until(
          `a new ${role}`,
          async () => {
            const now = await leaderOf[role]();
            return now && now !== leader ? now : undefined;
          },
          20_000,
        );
      }
      const leader = await leaderOf[role]();
      where.push(leader === target.name ? `${role} on it` : `${role} on ${leader}`);
    }
    // Let the servers settle on the new leaders before the load starts.
    await cluster.untilHealthy(30_000);
    return where.join(', ');
  }
});
