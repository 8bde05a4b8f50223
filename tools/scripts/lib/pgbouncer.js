'use strict';
/**
 * A private PgBouncer in transaction mode in front of a PostgreSQL URL, for tests that check the
 * services behind a pooler as production runs them: its own port, ini and auth file in a temporary
 * directory, stopped (and the directory removed) by `stop()`. Installs Debian's `pgbouncer` package
 * when it is missing and we run as root; otherwise fails saying what to install.
 */
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { aptInstall, portOpen } = require('./infra');
const { freePort } = require('./suite');

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Debian installs it in /usr/sbin, which is not on a non-root user's PATH. */
function pgbouncerBinary() {
  const found = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).stdout.trim();
  if (found) return found;
  return fs.existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : null;
}

function ensurePgbouncer() {
  const installed = pgbouncerBinary();
  if (installed) return installed;
  if (aptInstall(['pgbouncer'])) {
    const binary = pgbouncerBinary();
    if (binary) return binary;
  }
  throw new Error('pgbouncer is not installed: install it with `sudo apt-get install pgbouncer` (or run the tests as root, which installs it)');
}

/** `1.18.0` from `PgBouncer 1.18.0`. */
function pgbouncerVersion(binary = ensurePgbouncer()) {
  const output = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  const match = /PgBouncer (\d+\.\d+\.\d+)/.exec(output);
  if (!match) throw new Error(`cannot read the PgBouncer version from: ${output.trim()}`);
  return match[1];
}

/**
 * PgBouncer refuses to run as root ("PgBouncer should not run as root"): when we are root it drops
 * to this user with `-u`, and its directory is handed to that user so it can write its log and pid.
 */
function unprivilegedUser() {
  for (const user of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
    if (uid.status === 0) {
      const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
      return { name: user, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
    }
  }
  throw new Error('no unprivileged user (postgres or nobody) to run pgbouncer as');
}

/** Quoted for the auth file: a double quote inside is doubled. */
const quoted = (value) => `"${value.replace(/"/g, '""')}"`;

function tailOf(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts PgBouncer on a free port of 127.0.0.1 in front of `databaseUrl`'s server, in transaction
 * mode with `poolSize` server connections per database and user. The user and password of the URL
 * are the ones clients log in with and PgBouncer passes on; the user may also open PgBouncer's admin
 * console (database `pgbouncer`: `SHOW POOLS`, `SHOW CLIENTS`, ...).
 *
 * Resolves with `{ url, port, version, logFile, stop }`: `url` is `databaseUrl` through PgBouncer.
 */
async function startPgBouncer(databaseUrl, { poolSize = 5, maxClientConnections = 500 } = {}) {
  const binary = ensurePgbouncer();
  const version = pgbouncerVersion(binary);
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-pgbouncer-'));
  const logFile = path.join(dir, 'pgbouncer.log');
  const ini = path.join(dir, 'pgbouncer.ini');
  const authFile = path.join(dir, 'userlist.txt');
  const serverHost = target.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  fs.writeFileSync(
    ini,
    [
      '[databases]',
      // Any database name the client asks for, on the same server.
      `* = host=${serverHost} port=${target.port || 5432}`,
      '',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // SCRAM to clients and to the server with the password kept here; trust when the URL has none.
      `auth_type = ${password ? 'scram-sha-256' : 'trust'}`,
      `auth_file = ${authFile}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      `max_client_conn = ${maxClientConnections}`,
      `logfile = ${logFile}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(authFile, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });

  const args = ['-q', ini];
  if (isRoot()) {
    const owner = unprivilegedUser();
    for (const file of [dir, ini, authFile]) fs.chownSync(file, owner.uid, owner.gid);
    args.unshift('-u', owner.name);
  }
  const child = spawn(binary, args, { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let exit = null;
  exited.then((result) => (exit = result));

  const remove = () => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  const stop = async () => {
    if (!exit) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    remove();
  };

  const deadline = Date.now() + 15_000;
  while (!(await portOpen('127.0.0.1', port))) {
    if (exit || Date.now() > deadline) {
      const log = tailOf(logFile);
      await stop();
      throw new Error(`pgbouncer did not start on port ${port} (${exit ? `exited with ${exit.code ?? exit.signal}` : 'timed out'}):\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), port, version, logFile, stop };
}

module.exports = { startPgBouncer, pgbouncerVersion, ensurePgbouncer };
