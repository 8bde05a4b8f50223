'use strict';
/**
 * A local NATS cluster with JetStream, for tests and for trying the suite the way it runs in
 * production: N servers (3 by default) on free ports, each with its own client port, route port,
 * monitoring port, store directory and server name, all in one JetStream cluster. Resolves once the
 * JetStream meta group has a leader and knows every server, so a stream made right after may be
 * replicated on all of them. nats-server comes from Debian's package (installed when missing and
 * running as root, as `npm start` does).
 *
 *   const cluster = await startNatsCluster();   // { url, nodes, stop(), healthy() }
 *   cluster.url                                  // 'nats://127.0.0.1:p1,nats://127.0.0.1:p2,...'
 *   await cluster.nodes[1].kill();               // SIGKILL, as in a crash; start() brings it back
 *   cluster.nodes[1].freeze();                   // SIGSTOP: hung, answering nothing, until killed
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { aptInstall, natsServerBinary, waitForPort } = require('./infra');
const { freePort } = require('./suite');

const HOST = '127.0.0.1';

function ensureNatsServer() {
  const binary = natsServerBinary();
  if (binary) return binary;
  if (aptInstall(['nats-server'])) return natsServerBinary();
  throw new Error('nats-server is not installed. Install it with: sudo apt-get install nats-server');
}

/** The monitoring endpoint's JSON (or its HTTP status when not 200), or null when it does not answer. */
function monitor(port, pathname) {
  return new Promise((resolve) => {
    const request = http.get({ host: HOST, port, path: pathname, timeout: 2000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode, body: JSON.parse(body) });
        } catch {
          resolve({ status: response.statusCode, body: null });
        }
      });
    });
    request.on('error', () => resolve(null));
    request.on('timeout', () => {
      request.destroy();
      resolve(null);
    });
  });
}

async function poll(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await check();
    if (last === true) return;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms${last ? ` (${last})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

class NatsNode {
  constructor({ binary, name, port, clusterPort, monitorPort, storeDir, clusterName, routes, logFile }) {
    Object.assign(this, { binary, name, port, clusterPort, monitorPort, storeDir });
    this.url = `nats://${HOST}:${port}`;
    this.logFile = logFile;
    // Every server is given every route, its own included: nats-server skips a route to itself.
    const flags = {
      addr: HOST,
      port,
      server_name: name,
      http_port: monitorPort,
      store_dir: storeDir,
      cluster_name: clusterName,
      cluster: `nats://${HOST}:${clusterPort}`,
      routes: routes.join(','),
    };
    this.args = ['--jetstream', ...Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, String(value)])];
    this.child = null;
  }

  get running() {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server (again) on the same ports and store; resolves once it takes clients. */
  async start() {
    if (this.running) return;
    const output = this.logFile ? fs.openSync(this.logFile, 'a') : 'ignore';
    this.child = spawn(this.binary, this.args, { stdio: ['ignore', output, output] });
    if (typeof output === 'number') fs.closeSync(output);
    if (!(await waitForPort(HOST, this.port, 20))) throw new Error(`NATS node ${this.name} did not start on port ${this.port}`);
  }

  /** SIGKILL: no goodbye to clients or peers, as in a crash. */
  kill() {
    return this.signal('SIGKILL');
  }

  /**
   * SIGSTOP: a hung server. Its sockets stay open and take what is sent, and it answers nothing,
   * until it is killed or stopped (which also ends the freeze).
   */
  freeze() {
    if (this.running) this.child.kill('SIGSTOP');
  }

  /** SIGTERM (SIGKILL after 10 s): a clean shutdown. */
  stop() {
    return this.signal('SIGTERM');
  }

  async signal(signal) {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    // A frozen server (see freeze) takes SIGTERM only once it runs again.
    if (signal !== 'SIGKILL') child.kill('SIGCONT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** `/healthz`: 200 once this server's JetStream is current (meta group, streams and consumers caught up). */
  async healthy() {
    const answer = await monitor(this.monitorPort, '/healthz');
    return answer?.status === 200;
  }

  /** The names of the client connections on this server now (`/connz`), or null when it does not answer. */
  async clients() {
    const answer = await monitor(this.monitorPort, '/connz?limit=1024');
    return answer?.status === 200 ? (answer.body?.connections ?? []).map((connection) => connection.name ?? '') : null;
  }

  /** `/jsz`'s view of the JetStream meta group. */
  async metaCluster() {
    const answer = await monitor(this.monitorPort, '/jsz');
    return answer?.status === 200 ? answer.body?.meta_cluster : undefined;
  }
}

/**
 * Starts the cluster. Options: `size` (3), `name` (the JetStream cluster's name), `dir` (where the
 * stores go; a new temporary directory by default, removed by stop()), `logDir` (each server's output
 * to `<logDir>/<name>.log`), `timeoutMs` for the meta group to form (30 s).
 */
async function startNatsCluster({ size = 3, name = 'gateway', dir, logDir, timeoutMs = 30_000 } = {}) {
  const binary = ensureNatsServer();
  const root = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-nats-cluster-'));
  if (logDir) fs.mkdirSync(logDir, { recursive: true });
  const ports = [];
  for (let i = 0; i < size; i++) ports.push({ port: await freePort(), clusterPort: await freePort(), monitorPort: await freePort() });
  const routes = ports.map(({ clusterPort }) => `nats://${HOST}:${clusterPort}`);
  const nodes = ports.map((nodePorts, i) => {
    const nodeName = `${name}-${i + 1}`;
    const storeDir = path.join(root, nodeName);
    fs.mkdirSync(storeDir, { recursive: true });
    const logFile = logDir ? path.join(logDir, `${nodeName}.log`) : undefined;
    return new NatsNode({ binary, name: nodeName, ...nodePorts, storeDir, clusterName: name, routes, logFile });
  });

  // A test runner that exits without stop() (a crash, a forced exit) must not leave servers behind.
  const killAll = () => nodes.forEach((node) => node.running && node.child.kill('SIGKILL'));
  process.once('exit', killAll);
  const cluster = {
    url: nodes.map((node) => node.url).join(','),
    nodes,
    /** Every running server's JetStream current, and the meta group led and complete. */
    healthy: () => clusterHealthy(nodes),
    /** Resolves once healthy() holds; rejects after `ms`. */
    untilHealthy: (ms = timeoutMs) => poll('the NATS cluster was not healthy', () => clusterHealthy(nodes), ms),
    async stop() {
      process.off('exit', killAll);
      await Promise.all(nodes.map((node) => node.stop()));
      if (!dir) fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
    await cluster.untilHealthy(timeoutMs);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** true, or why not: the running servers answer `/healthz` 200 and agree on a meta leader that sees all of them. */
async function clusterHealthy(nodes) {
  const running = nodes.filter((node) => node.running);
  if (running.length === 0) return 'no server is running';
  for (const node of running) {
    if (!(await node.healthy())) return `${node.name} is not healthy yet`;
  }
  const leaderName = (await running[0].metaCluster())?.leader;
  const leader = running.find((node) => node.name === leaderName);
  if (!leader) return 'no JetStream meta leader yet';
  // Only the leader lists the group's other members (each with whether it is current).
  const meta = await leader.metaCluster();
  if (meta?.leader !== leader.name) return 'the JetStream meta leader is changing';
  const current = new Set([leader.name, ...(meta.replicas ?? []).filter((peer) => peer.current && !peer.offline).map((peer) => peer.name)]);
  const missing = running.filter((node) => !current.has(node.name)).map((node) => node.name);
  return missing.length === 0 ? true : `the meta group does not see ${missing.join(', ')} yet`;
}

module.exports = { startNatsCluster };

// `node tools/scripts/lib/nats-cluster.js [size]`: a cluster for `NATS_URL=... npm start`, until Ctrl-C.
if (require.main === module) {
  startNatsCluster({ size: Number(process.argv[2] ?? 3) }).then(
    (cluster) => {
      console.log(`NATS cluster of ${cluster.nodes.length} (JetStream on), until Ctrl-C:\n\n  NATS_URL=${cluster.url}\n`);
      const stop = () => cluster.stop().then(() => process.exit(0));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    (error) => {
      console.error(`the NATS cluster did not start: ${error.message}`);
      process.exit(1);
    },
  );
}
