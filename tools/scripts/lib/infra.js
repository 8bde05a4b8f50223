'use strict';
/**
 * Makes sure PostgreSQL, Redis and NATS (with JetStream) answer on their localhost ports: starts them
 * when installed and stopped, installs them from Debian's packages when missing and running as root,
 * otherwise stops with what to install. Servers named by a non-local URL are only checked, and so
 * are a Redis Cluster or Sentinel set-up (REDIS_CLUSTER_NODES, REDIS_SENTINELS) and a NATS_URL
 * naming several servers (a NATS cluster).
 */
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
const which = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim() || null;
const log = (message) => process.stderr.write(`[infra] ${message}\n`);

function portOpen(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitForPort(host, port, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (await portOpen(host, port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** How long apt-get waits for another apt-get or dpkg (another test run installing the same) to let go of its locks. */
const APT_LOCK_WAIT_MS = 10 * 60_000;
const APT_LOCKED = /Could not get lock|Unable to lock|Unable to acquire the dpkg frontend lock/;

/**
 * Runs apt-get; while another apt-get or dpkg holds a lock it needs (two runs installing the same
 * package on a fresh machine), tries again each second until that one is done. `DPkg::Lock::Timeout`
 * covers dpkg's lock only, not `apt-get update`'s lists lock.
 */
function aptGet(args, env) {
  const deadline = Date.now() + APT_LOCK_WAIT_MS;
  for (let waited = false; ;) {
    const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=60', ...args], { stdio: ['ignore', 'inherit', 'pipe'], env, encoding: 'utf8' });
    if (result.status === 0) return;
    if (!APT_LOCKED.test(result.stderr ?? '') || Date.now() > deadline) {
      process.stderr.write(result.stderr ?? '');
      throw new Error(`Command failed: apt-get ${args.join(' ')}`);
    }
    if (!waited) log(`apt-get ${args[0]}: another apt-get holds its lock; waiting for it`);
    waited = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  }
}

let aptUpdated = false;
function aptInstall(packages) {
  if (!isRoot()) return false;
  if (!which('apt-get')) return false;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    log('apt-get update');
    aptGet(['update', '-qq'], env);
    aptUpdated = true;
  }
  log(`apt-get install ${packages.join(' ')}`);
  aptGet(['install', '-y', '-qq', '--no-install-recommends', ...packages], env);
  return true;
}

function findPostgresBin(name) {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const candidate = path.join(root, version, 'bin', name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

const services = {
  postgresql: {
    port: 5432,
    packages: ['postgresql'],
    installed: () => Boolean(which('pg_ctlcluster') && fs.existsSync('/etc/postgresql')),
    start() {
      const clusters = fs.readdirSync('/etc/postgresql');
      if (clusters.length === 0) throw new Error('PostgreSQL is installed but has no cluster (run pg_createcluster)');
      for (const version of clusters) {
        spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit' });
      }
      return () => {
        for (const version of clusters) {
          spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'stop'], { stdio: 'ignore' });
        }
      };
    },
  },
  redis: {
    port: 6379,
    packages: ['redis-server'],
    installed: () => Boolean(which('redis-server')),
    start() {
      const dir = fs.existsSync('/var/lib/redis') ? '/var/lib/redis' : require('node:os').tmpdir();
      const pidFile = path.join(require('node:os').tmpdir(), 'gateway-redis.pid');
      spawnSync(
        'redis-server',
        ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379', '--save', '', '--appendonly', 'no', '--dir', dir, '--pidfile', pidFile],
        { stdio: 'inherit' },
      );
      return () => {
        try {
          process.kill(Number(fs.readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
        } catch {
          // already gone
        }
      };
    },
  },
  nats: {
    port: 4222,
    packages: ['nats-server'],
    installed: () => Boolean(natsServerBinary()),
    start() {
      const storeDir = fs.existsSync('/var/lib/nats-server') || isRoot() ? '/var/lib/nats-server' : path.join(require('node:os').tmpdir(), 'nats-js');
      fs.mkdirSync(storeDir, { recursive: true });
      const child = spawn(natsServerBinary(), ['-a', '127.0.0.1', '-p', '4222', '-js', '-sd', storeDir], {
        detached: true,
        stdio: 'ignore',
      });
      child.unref();
      return () => {
        try {
          process.kill(child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      };
    },
  },
};

/** redis-server on this machine, for set-ups of several servers: installed from Debian when missing and running as root. */
function ensureRedisServer() {
  if (services.redis.installed()) return;
  if (!aptInstall(services.redis.packages)) throw new Error('redis-server is not installed: sudo apt-get install redis-server');
}

function natsServerBinary() {
  return which('nats-server') || (fs.existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : null);
}

function hostOf(url, fallback) {
  try {
    return new URL(url).hostname || fallback;
  } catch {
    return fallback;
  }
}

/** Resolves with a function that stops the server again when this call started it, else null. */
async function ensureService(name, host) {
  const service = services[name];
  if (await portOpen(host, service.port)) return null;
  if (!LOCAL_HOSTS.has(host)) throw new Error(`${name} at ${host}:${service.port} does not answer`);
  if (!service.installed()) {
    if (!aptInstall(service.packages)) {
      throw new Error(
        `${name} is not running on port ${service.port} and is not installed. Install it with: ` +
          `sudo apt-get install ${service.packages.join(' ')} (or start it yourself on port ${service.port})`,
      );
    }
  }
  log(`starting ${name}`);
  const stop = service.start();
  if (!(await waitForPort('127.0.0.1', service.port, 30))) {
    throw new Error(`${name} did not start listening on port ${service.port}`);
  }
  return () => {
    log(`stopping ${name}`);
    stop();
  };
}

/**
 * A Redis Cluster or Sentinel set-up is the operator's: nothing is started, one of its nodes must
 * answer.
 */
async function checkRedisNodes(list, variable) {
  const nodes = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const node of nodes) {
    const at = node.lastIndexOf(':');
    if (await portOpen(node.slice(0, at).replace(/^\[|\]$/g, ''), Number(node.slice(at + 1)), 1000)) return;
  }
  throw new Error(`none of ${variable} (${list}) answers`);
}

/** Sets a password for the local `postgres` role when the server wants one and we may set it. */
async function ensurePostgresLogin(databaseUrl) {
  const { Client } = require('pg');
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  try {
    await client.connect();
    await client.end();
  } catch (error) {
    const authFailed = ['28P01', '28000'].includes(error.code);
    if (!authFailed || !isRoot() || !LOCAL_HOSTS.has(url.hostname) || !which('runuser')) throw error;
    const password = decodeURIComponent(url.password || 'postgres').replace(/'/g, "''");
    const user = decodeURIComponent(url.username || 'postgres').replace(/"/g, '""');
    log(`setting the password of PostgreSQL role ${user} from DATABASE_URL`);
    execFileSync('runuser', ['-u', 'postgres', '--', 'psql', '-q', '-c', `ALTER ROLE "${user}" WITH LOGIN PASSWORD '${password}'`], {
      stdio: 'inherit',
      cwd: '/',
    });
  }
}

/**
 * A NATS_URL naming several servers is a cluster someone else runs (tools/scripts/lib/nats-cluster.js,
 * or a real one): nothing is started for it. Says which servers do not answer; throws when none does.
 */
async function checkNatsServers(servers) {
  const answering = [];
  for (const server of servers) {
    let host;
    let port;
    try {
      const url = new URL(server);
      host = url.hostname.replace(/^\[|\]$/g, '');
      port = Number(url.port || 4222);
    } catch {
      throw new Error(`NATS_URL holds ${server}, which is not a URL`);
    }
    if (await portOpen(host, port)) answering.push(server);
    else log(`NATS server ${server} does not answer (the cluster may still serve without it)`);
  }
  if (answering.length === 0) throw new Error(`none of the NATS servers in NATS_URL answers (${servers.join(', ')})`);
  log(`NATS: ${answering.length} of ${servers.length} servers answer; none started here`);
}

async function ensureJetStream(natsUrl) {
  const { connect } = require('nats');
  const connection = await connect({ servers: natsUrl.split(','), timeout: 3000 }).catch((error) => {
    throw new Error(`NATS at ${natsUrl} does not answer (${error.code ?? error.message})`);
  });
  try {
    await connection.jetstreamManager();
  } catch {
    throw new Error('NATS answers but JetStream is off: restart nats-server with -js');
  } finally {
    await connection.close();
  }
}

/**
 * Resolves when all three answer, with a function that stops the servers this call started (and
 * only those); throws with an actionable message otherwise.
 */
async function ensureInfra(env = process.env) {
  const databaseUrl = env.DATABASE_URL || defaults.DATABASE_URL;
  const redisUrl = env.REDIS_URL || defaults.REDIS_URL;
  const natsUrl = env.NATS_URL || defaults.NATS_URL;
  const started = [];
  started.push(await ensureService('postgresql', hostOf(databaseUrl, '127.0.0.1')));
  const redisNodes = env.REDIS_CLUSTER_NODES || env.REDIS_SENTINELS;
  if (redisNodes) await checkRedisNodes(redisNodes, env.REDIS_CLUSTER_NODES ? 'REDIS_CLUSTER_NODES' : 'REDIS_SENTINELS');
  else started.push(await ensureService('redis', hostOf(redisUrl, '127.0.0.1')));
  const natsServers = natsUrl.split(',').filter(Boolean);
  if (natsServers.length > 1) await checkNatsServers(natsServers);
  else started.push(await ensureService('nats', hostOf(natsServers[0], '127.0.0.1')));
  await ensurePostgresLogin(databaseUrl);
  await ensureJetStream(natsUrl);
  const stops = started.filter(Boolean);
  return () => stops.reverse().forEach((stop) => stop());
}

/** Where Debian's `chromium` package puts the browser the console's browser tests drive. */
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/**
 * The Chromium executable for the browser tests (apps/gateway-e2e/src/console): CHROMIUM_PATH when
 * set, else Debian's `chromium`, installed from Debian's packages when missing and running as root.
 * Throws with what to install otherwise.
 */
function ensureChromium(env = process.env) {
  if (env.CHROMIUM_PATH) {
    if (!fs.existsSync(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH names ${env.CHROMIUM_PATH}, which does not exist`);
    return env.CHROMIUM_PATH;
  }
  const found = () => CHROMIUM_CANDIDATES.find((candidate) => fs.existsSync(candidate)) ?? which('chromium');
  if (found()) return found();
  if (!aptInstall(['chromium']) || !found()) {
    throw new Error('Chromium is not installed (the console browser tests need it): sudo apt-get install chromium, or set CHROMIUM_PATH');
  }
  return found();
}

const defaults = {
  DATABASE_URL: 'postgresql://postgres:postgres@127.0.0.1:5432/gateway',
  REDIS_URL: 'redis://127.0.0.1:6379',
  NATS_URL: 'nats://127.0.0.1:4222',
};

module.exports = { ensureInfra, ensureChromium, ensureRedisServer, portOpen, waitForPort, natsServerBinary, aptInstall, defaults };
