import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rpc, Subjects, UsageStream, type UsageRecordedEvent } from '@gateway/contracts';
import { AckPolicy, connect, type NatsConnection } from 'nats';
import { NATS_RECONNECT_OPTIONS } from './connection-resilience';
import { JetStreamConnection, USAGE_STREAM } from './jetstream.connection';
import { replicaPolicy } from './jetstream-streams';
import { NatsRpcClient } from './nats-transport/client';
import { NatsTransportServer, onTransportDisconnect } from './nats-transport/server';
import { publishUsageEvent } from './usage-event.publish';

// Tooling shared with `npm start`: plain JS outside any project.
/* eslint-disable @nx/enforce-module-boundaries */
const { startNatsCluster } = require('../../../tools/scripts/lib/nats-cluster');
const { natsServerBinary, waitForPort } = require('../../../tools/scripts/lib/infra');
const { freePort } = require('../../../tools/scripts/lib/suite');
/* eslint-enable @nx/enforce-module-boundaries */

interface ClusterNode {
  name: string;
  url: string;
  kill(): Promise<void>;
  freeze(): void;
  start(): Promise<void>;
}
interface Cluster {
  url: string;
  nodes: ClusterNode[];
  untilHealthy(ms?: number): Promise<void>;
  stop(): Promise<void>;
}

const quiet = { error: () => undefined };

function event(requestId: string): UsageRecordedEvent {
  return {
    requestId,
    accountId: 'acc_cluster',
    keyId: 'key_cluster',
    keyType: 'master',
    maskedKey: 'ek-…abcd',
    ip: '127.0.0.1',
    model: 'sim-chat',
    route: 'chat.completions',
    inputTokens: 1,
    outputTokens: 1,
    status: 'success',
    timestamp: Math.floor(Date.now() / 1000),
  } as UsageRecordedEvent;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The message id of each message in the stream from sequence `from` on, in order. */
async function storedIds(nats: NatsConnection, stream: string, from: number): Promise<string[]> {
  const manager = await nats.jetstreamManager();
  const { last_seq } = (await manager.streams.info(stream)).state;
  const ids: string[] = [];
  for (let seq = from; seq <= last_seq; seq++) {
    const message = await manager.streams.getMessage(stream, { seq });
    ids.push(message.header.get('Nats-Msg-Id'));
  }
  return ids;
}

async function connected(servers: string[]): Promise<JetStreamConnection> {
  const connection = new JetStreamConnection(servers);
  await connection.onModuleInit();
  return connection;
}

/**
 * The gateway's JetStream streams and NATS wire on a real 3-node NATS cluster (tools/scripts/lib/
 * nats-cluster.js): replicated streams and consumers, usage events neither lost nor doubled when
 * the stream's leader dies, and request/reply served again after the server a service was on dies.
 */
describe('JetStream on a 3-node NATS cluster', () => {
  let cluster: Cluster;
  let admin: NatsConnection;
  /** A service's JetStream connection, as the router's or the edge's. */
  let usage: JetStreamConnection;
  const connections: JetStreamConnection[] = [];

  beforeAll(async () => {
    cluster = await startNatsCluster({ name: 'platform-int', logDir: join(__dirname, '../../../tmp/nats-cluster-int') });
    admin = await connect({ servers: cluster.url.split(','), ...NATS_RECONNECT_OPTIONS });
    usage = await connected(cluster.url.split(','));
    connections.push(usage);
  }, 60_000);

  afterAll(async () => {
    for (const connection of connections) await connection.onApplicationShutdown();
    await admin?.close();
    await cluster?.stop();
  });

  /** Kills `node` and, after `during`, starts it again and waits for the cluster to be whole. */
  async function withNodeDown(node: ClusterNode, during: () => Promise<void>): Promise<void> {
    await node.kill();
    try {
      await during();
    } finally {
      await node.start();
      await cluster.untilHealthy(60_000);
    }
  }

  it('creates the usage stream with three replicas, and the durable consumer made as metering makes it follows them', async () => {
    const manager = await admin.jetstreamManager();
    const stream = await manager.streams.info(UsageStream.name);
    expect(stream.config.num_replicas).toBe(3);
    expect(stream.cluster?.name).toBe('platform-int');

    await manager.consumers.add(UsageStream.name, { durable_name: 'cluster-test', ack_policy: AckPolicy.Explicit });
    const consumer = await until('the consumer has its replicas', async () => {
      const info = await manager.consumers.info(UsageStream.name, 'cluster-test');
      return info.cluster?.replicas?.length === 2 ? info : undefined;
    });
    expect([consumer.cluster?.leader, ...(consumer.cluster?.replicas ?? []).map((replica) => replica.name)].sort()).toEqual(
      cluster.nodes.map((node) => node.name).sort(),
    );
    // Gone before the servers are killed: this consumer never sees traffic, and nats-server 2.9.10
    // was seen to report such a copy on a restarted server "not current" for good, which would keep
    // the cluster unhealthy in the tests that follow (metering's consumer, in use, catches up).
    await manager.consumers.delete(UsageStream.name, 'cluster-test');
  }, 30_000);

  it('scales an R1 stream (made on a single server, before the cluster) up to R3 where the server can do it safely, its consumers with it', async () => {
    const manager = await admin.jetstreamManager();
    const definition = { ...USAGE_STREAM, name: 'GROWN', subjects: ['grown.>'] };
    await manager.streams.add({ ...definition, num_replicas: 1 });
    await manager.consumers.add('GROWN', { durable_name: 'metering', ack_policy: AckPolicy.Explicit });

    const connection = await connected(cluster.url.split(','));
    connections.push(connection);
    await connection.ensureStream(definition);

    if (!replicaPolicy(admin.info).scaleUp) {
      // nats-server 2.9 (see replicaPolicy): left as it is, with a warning naming the way to do it by hand.
      expect((await manager.streams.info('GROWN')).config.num_replicas).toBe(1);
      return;
    }
    expect((await manager.streams.info('GROWN')).config.num_replicas).toBe(3);
    await until('the consumer follows its stream to three replicas', async () => {
      const info = await manager.consumers.info('GROWN', 'metering');
      return info.cluster?.replicas?.length === 2 ? true : undefined;
    });
  }, 30_000);

  it('gives a stream created with one copy, while the cluster could not place three, its three copies once it can', async () => {
    if (!replicaPolicy(admin.info).scaleUp) return; // nats-server 2.9: never scaled up (previous test)
    const manager = await admin.jetstreamManager();
    const definition = { ...USAGE_STREAM, name: 'FORMING', subjects: ['forming.>'] };
    const connection = await connected(cluster.url.split(','));
    connections.push(connection);
    // Two servers of three: three copies cannot be placed, so the stream is made with one.
    await withNodeDown(cluster.nodes[2], async () => {
      await connection.ensureStream(definition);
      expect((await manager.streams.info('FORMING')).config.num_replicas).toBe(1);
    });
    // Asked again in the background when the server rejoins (a membership change): no restart needed.
    await until('the stream has three copies', async () => ((await manager.streams.info('FORMING')).config.num_replicas === 3 ? true : undefined), 60_000);
  }, 150_000);

  it('keeps each usage event exactly once when the stream leader is killed while they are published', async () => {
    const manager = await admin.jetstreamManager();
    const first = (await manager.streams.info(UsageStream.name)).state.last_seq + 1;
    const leader = (await manager.streams.info(UsageStream.name)).cluster?.leader;
    const node = cluster.nodes.find((candidate) => candidate.name === leader) as ClusterNode;
    expect(node).toBeDefined();

    const ids = Array.from({ length: 1000 }, (_, i) => `req_cluster_${i}`);
    let acknowledged = 0;
    let attempts = 0;
    let duplicates = 0;
    // The router's publisher, counting attempts and the acks JetStream marks as duplicates.
    const target = {
      publish: async (subject: string, data: Uint8Array, options: { msgID: string }) => {
        attempts++;
        const ack = await usage.publisher.publish(subject, data, options);
        if (ack.duplicate) duplicates++;
        return ack;
      },
    };
    // Ten at a time, paced, for a few seconds; the leader dies a tenth of the way through.
    const queue = [...ids];
    const lanes = Array.from({ length: 10 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await publishUsageEvent(target, event(id), quiet, { untilAcknowledged: true });
        acknowledged++;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    });
    await until('a tenth acknowledged', async () => (acknowledged >= 100 ? true : undefined));
    // The leader hangs first, so that some publishes are on their way to it when it dies: they get no
    // acknowledgement, whatever the timing of the election that follows.
    const attemptsAtFreeze = attempts;
    node.freeze();
    await until('a publish sent while the leader hangs', async () => (attempts > attemptsAtFreeze ? true : undefined));
    let atKill = 0;
    await withNodeDown(node, async () => {
      atKill = acknowledged;
      await Promise.all(lanes);
    });

    expect(atKill).toBeLessThan(ids.length / 2);
    expect(acknowledged).toBe(ids.length);
    // Publishes the hung, then dead, leader did not answer were sent again, with the same message id.
    expect(attempts).toBeGreaterThan(ids.length);
    const stored = await storedIds(admin, UsageStream.name, first);
    expect(stored).toHaveLength(ids.length);
    expect(new Set(stored)).toEqual(new Set(ids));
    console.log(
      `stream leader killed after ${atKill} of ${ids.length} events: ${attempts} attempts, ${duplicates} answered as duplicates, ${stored.length} stored`,
    );
  }, 120_000);

  it("serves request/reply again once the service's server died: the queue subscription moves with the reconnect", async () => {
    const servers = cluster.url.split(',');
    const server = new NatsTransportServer({ servers, queue: 'cluster-test', name: 'cluster-test', ...NATS_RECONNECT_OPTIONS });
    server.addHandler(Subjects.masterKeyRegenerate, async (payload: { accountId: string }) => ({ key: `ek-for-${payload.accountId}` }));
    await new Promise<void>((resolve, reject) => server.listen((error) => (error ? reject(error) : resolve())));
    const serving = server.unwrap<NatsConnection>().getServer();
    const node = cluster.nodes.find((candidate) => candidate.url.endsWith(serving.replace(/^.*:\/\//, ''))) as ClusterNode;
    expect(node).toBeDefined();
    // The caller on another server, so it stays connected throughout.
    const caller = await connect({ servers: servers.filter((url) => url !== node.url), ...NATS_RECONNECT_OPTIONS });
    const client = new NatsRpcClient({ nats: caller });
    // What the router and the edge follow: the transport's own server gone, and a server of the cluster gone.
    let transportDisconnects = 0;
    let serversLost = 0;
    const stopTransportWatch = onTransportDisconnect(() => transportDisconnects++);
    const stopServerWatch = usage.onServerLost(() => serversLost++);
    try {
      await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 'before' }, 2000)).resolves.toEqual({ key: 'ek-for-before' });
      await withNodeDown(node, async () => {
        const failures = new Set<string>();
        const answer = await until('answered again after the kill', () =>
          client.request(Rpc.masterKeyRegenerate, { accountId: 'after' }, 1000).catch((error: { code?: string; name?: string }) => {
            failures.add(String(error?.code ?? error?.name));
            return undefined;
          }),
        );
        expect(answer).toEqual({ key: 'ek-for-after' });
        // Meanwhile only "nobody serves it" or "no answer in time": what the edge maps to 503.
        expect([...failures].filter((failure) => !['NO_RESPONDERS', 'TimeoutError'].includes(failure))).toEqual([]);
        expect(transportDisconnects).toBe(1);
        await until('the server loss told', async () => (serversLost > 0 ? true : undefined));
      });
    } finally {
      stopTransportWatch();
      stopServerWatch();
      await caller.close();
      await server.close();
    }
  }, 90_000);
});

describe('JetStream on a lone NATS server', () => {
  let child: ChildProcess;
  let storeDir: string;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    storeDir = mkdtempSync(join(tmpdir(), 'platform-int-nats-'));
    child = spawn(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    if (!(await waitForPort('127.0.0.1', port, 10))) throw new Error('the test NATS server did not start');
    url = `nats://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('creates the usage stream with one replica', async () => {
    const connection = await connected([url]);
    try {
      const manager = await connection.nats.jetstreamManager();
      expect((await manager.streams.info(UsageStream.name)).config.num_replicas).toBe(1);
    } finally {
      await connection.onApplicationShutdown();
    }
  });
});
