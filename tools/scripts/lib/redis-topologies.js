'use strict';
/**
 * Redis set-ups of several servers on this machine, from Debian's `redis-server` (which also runs
 * Sentinel with `--sentinel`), on free ports, for the high-availability tests: a Redis Cluster
 * (masters with a replica each) and a Sentinel set-up (a master, a replica, three sentinels).
 * Every server is a child of this process, killable one by one.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { ensureRedisServer, portOpen, waitForPort } = require('./infra');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freePortPair() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const server = net.createServer();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port: chosen } = server.address();
        server.close(() => resolve(chosen));
      });
    });
    if (port + 10000 < 65536 && !(await portOpen('127.0.0.1', port + 10000, 200))) return port;
  }
}

/** One redis-server (or sentinel) process, restartable on the same port with the same files. */
class RedisNode {
  constructor(port, args, dir) {
    this.port = port;
    this.args = args;
    this.dir = dir;
    this.child = undefined;
  }

  get address() {
    return `127.0.0.1:${this.port}`;
  }

  async start() {
    const log = fs.openSync(path.join(this.dir, 'server.log'), 'a');
    this.child = spawn('redis-server', this.args, { cwd: this.dir, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    if (!(await waitForPort('127.0.0.1', this.port, 20))) throw new Error(`redis-server on ${this.port} did not start (see ${this.dir}/server.log)`);
  }

  /** kill -9: a crash, no goodbye to anyone. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  cli(...args) {
    return execFileSync('redis-cli', ['-p', String(this.port), '--no-auth-warning', ...args], { encoding: 'utf8', timeout: 10_000 });
  }
}

async function waitFor(what, condition, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const infoField = (text, field) => new RegExp(`^${field}:(.*)$`, 'm').exec(text)?.[1]?.trim();

/**
 * A Redis Cluster of `masters` masters with `replicas` replicas each, every node with a short
 * `cluster-node-timeout` so a failover takes seconds. Resolves once every slot is served and every
 * replica is in sync, with `{ nodes, env: 'host:port,…', masterOf(key), replicaOf(master), stop() }`.
 */
async function startRedisCluster({ masters = 3, replicas = 1, nodeTimeoutMs = 1000 } = {}) {
  ensureRedisServer();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-redis-cluster-'));
  const nodes = [];
  try {
    for (let index = 0; index < masters * (1 + replicas); index++) {
      const port = await freePortPair();
      const dir = path.join(root, String(port));
      fs.mkdirSync(dir);
      const args = [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', String(nodeTimeoutMs), '--save', '', '--appendonly', 'no', '--dir', dir,
      ]; // prettier-ignore
      const node = new RedisNode(port, args, dir);
      nodes.push(node);
      await node.start();
    }
    execFileSync('redis-cli', ['--cluster', 'create', ...nodes.map((node) => node.address), '--cluster-replicas', String(replicas), '--cluster-yes'], {
      stdio: 'ignore',
      timeout: 60_000,
    });
    const cluster = new RedisClusterHandle(nodes, root);
    await cluster.waitHealthy();
    return cluster;
  } catch (error) {
    await Promise.all(nodes.map((node) => node.kill()));
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

class RedisClusterHandle {
  constructor(nodes, root) {
    this.nodes = nodes;
    this.root = root;
  }

  /** REDIS_CLUSTER_NODES for the services. */
  get env() {
    return this.nodes.map((node) => node.address).join(',');
  }

  /** The live nodes' view: `[{ node, role, masterPort }]` from CLUSTER NODES of a live node. */
  roles() {
    const live = this.nodes.filter((node) => node.child && node.child.exitCode === null && node.child.signalCode === null);
    for (const node of live) {
      try {
        const lines = node.cli('cluster', 'nodes').trim().split('\n');
        const byId = new Map(lines.map((line) => line.split(' ')).map((fields) => [fields[0], fields]));
        return lines.map((line) => {
          const [, address, flags, masterId] = line.split(' ');
          const port = Number(address.split('@')[0].split(':')[1]);
          const master = byId.get(masterId);
          return {
            node: this.nodes.find((candidate) => candidate.port === port),
            role: flags.includes('master') ? 'master' : 'replica',
            failed: flags.includes('fail'),
            masterPort: master ? Number(master[1].split('@')[0].split(':')[1]) : undefined,
          };
        });
      } catch {
        // try the next node
      }
    }
    throw new Error('no cluster node answers');
  }

  /** Every slot served, by the live nodes' own account, and every live replica in sync with its master. */
  async waitHealthy(seconds = 60) {
    await waitFor(
      'the Redis Cluster to be healthy',
      () => {
        const live = this.roles().filter((entry) => !entry.failed && entry.node.child?.exitCode === null && entry.node.child?.signalCode === null);
        return live.every(({ node, role }) => {
          if (infoField(node.cli('cluster', 'info'), 'cluster_state') !== 'ok') return false;
          return role === 'master' || infoField(node.cli('info', 'replication'), 'master_link_status') === 'up';
        });
      },
      seconds,
    );
  }

  /** The live master serving `slot`. */
  masterOfSlot(slot) {
    for (const node of this.nodes.filter((candidate) => candidate.child?.exitCode === null && candidate.child?.signalCode === null)) {
      try {
        for (const line of node.cli('cluster', 'nodes').trim().split('\n')) {
          const fields = line.split(' ');
          if (!fields[2].includes('master') || fields[2].includes('fail')) continue;
          const serves = fields.slice(8).some((range) => {
            const [from, to = from] = range.split('-').map(Number);
            return slot >= from && slot <= to;
          });
          if (serves) return this.nodes.find((candidate) => candidate.address === fields[1].split('@')[0]);
        }
      } catch {
        // the next node
      }
    }
    throw new Error(`no live master serves slot ${slot}`);
  }

  /** A live master's node. */
  aMaster() {
    const entry = this.roles().find(({ role, failed }) => role === 'master' && !failed);
    if (!entry) throw new Error('no live master');
    return entry.node;
  }

  async stop() {
    await Promise.all(this.nodes.map((node) => node.kill()));
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * A master, one replica and three sentinels watching them under `name` (quorum 2, down after
 * `downAfterMs`). Resolves once the replica is in sync and every sentinel knows the master, with
 * `{ master, replica, sentinels, env: 'host:port,…' (REDIS_SENTINELS), name, currentMaster(), stop() }`.
 */
async function startRedisSentinel({ name = 'gateway', downAfterMs = 1000 } = {}) {
  ensureRedisServer();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-redis-sentinel-'));
  const started = [];
  const server = async (extra) => {
    const port = await freePortPair();
    const dir = path.join(root, String(port));
    fs.mkdirSync(dir);
    const node = new RedisNode(port, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], dir);
    started.push(node);
    await node.start();
    return node;
  };
  try {
    const master = await server([]);
    const replica = await server(['--replicaof', '127.0.0.1', String(master.port)]);
    const sentinels = [];
    for (let index = 0; index < 3; index++) {
      const port = await freePortPair();
      const dir = path.join(root, `sentinel-${port}`);
      fs.mkdirSync(dir);
      // Sentinel rewrites its configuration file (the set-up it learned), so it has one of its own.
      const config = path.join(dir, 'sentinel.conf');
      fs.writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = new RedisNode(port, [config, '--sentinel'], dir);
      started.push(sentinel);
      await sentinel.start();
      sentinels.push(sentinel);
    }
    const handle = new RedisSentinelHandle({ master, replica, sentinels, name, root, nodes: started });
    await waitFor(
      'the Sentinel set-up to be ready',
      () =>
        infoField(replica.cli('info', 'replication'), 'master_link_status') === 'up' &&
        sentinels.every((sentinel) => sentinel.cli('sentinel', 'get-master-addr-by-name', name).includes(String(master.port))),
    );
    // Every sentinel has found the other two (it needs them for a quorum to fail over).
    await waitFor('the sentinels to know each other', () =>
      sentinels.every(
        (sentinel) =>
          sentinel
            .cli('sentinel', 'sentinels', name)
            .split('\n')
            .filter((line) => line === 'runid').length === 2,
      ),
    );
    return handle;
  } catch (error) {
    await Promise.all(started.map((node) => node.kill()));
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

class RedisSentinelHandle {
  constructor({ master, replica, sentinels, name, root, nodes }) {
    Object.assign(this, { master, replica, sentinels, name, root, nodes });
  }

  get env() {
    return this.sentinels.map((sentinel) => sentinel.address).join(',');
  }

  /** The master's port as the sentinels now report it. */
  currentMasterPort() {
    for (const sentinel of this.sentinels) {
      try {
        const [, port] = sentinel.cli('sentinel', 'get-master-addr-by-name', this.name).trim().split('\n');
        return Number(port);
      } catch {
        // the next sentinel
      }
    }
    throw new Error('no sentinel answers');
  }

  async stop() {
    await Promise.all(this.nodes.map((node) => node.kill()));
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

module.exports = { startRedisCluster, startRedisSentinel, waitFor };
