'use strict';
/**
 * Runs the suite's services as child processes from dist/ (used by `npm start` and the end-to-end
 * tests): each gets its environment and health port, its output prefixed or written to a file, and
 * stops on SIGTERM.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');

/** In start order: the edge last, once the services it asks are up. */
const APPS = ['key-service', 'account-service', 'metering-service', 'inference-router', 'video-worker', 'edge-gateway'];

const DEFAULT_HEALTH_PORTS = {
  'inference-router': 9101,
  'key-service': 9102,
  'account-service': 9103,
  'metering-service': 9104,
  'video-worker': 9105,
};

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function httpStatus(url) {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('error', () => resolve(0));
    request.on('timeout', () => {
      request.destroy();
      resolve(0);
    });
  });
}

class Suite {
  /**
   * @param {object} options
   * @param {Record<string,string>} options.env environment for every service
   * @param {string} [options.logDir] write each service's output to <logDir>/<id>.log instead of the console
   */
  constructor({ env, logDir }) {
    this.env = env;
    this.logDir = logDir;
    this.processes = new Map();
    this.stopping = false;
    this.onUnexpectedExit = null;
    if (logDir) fs.mkdirSync(logDir, { recursive: true });
  }

  /** Starts one process of an app and resolves with its health URL once /readyz answers 200. */
  async start(app, { id = app, env = {}, port, timeoutMs = 30_000 } = {}) {
    const isEdge = app === 'edge-gateway';
    const healthPort = port ?? (isEdge ? Number(env.PORT ?? this.env.PORT ?? 8080) : DEFAULT_HEALTH_PORTS[app]);
    const childEnv = { ...this.env, ...env, ...(isEdge ? { PORT: String(healthPort) } : { HEALTH_PORT: String(healthPort) }) };
    const entry = path.join(root, 'dist', 'apps', app, 'src', 'main.js');
    if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: build first (npm run build)`);
    const child = spawn(process.execPath, ['--enable-source-maps', entry], {
      cwd: root,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.attachOutput(id, child);
    const record = { app, id, child, healthPort, exited: false };
    this.processes.set(id, record);
    child.on('exit', (code, signal) => {
      record.exited = true;
      if (!this.stopping && this.processes.get(id) === record && this.onUnexpectedExit) this.onUnexpectedExit(id, code, signal);
    });
    const url = `http://127.0.0.1:${healthPort}/readyz`;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (record.exited) throw new Error(`${id} exited during startup${this.logDir ? ` (see ${path.join(this.logDir, `${id}.log`)})` : ''}`);
      if ((await httpStatus(url)) === 200) return { id, healthPort, pid: child.pid };
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`${id} was not ready within ${timeoutMs} ms`);
  }

  attachOutput(id, child) {
    if (this.logDir) {
      const file = fs.createWriteStream(path.join(this.logDir, `${id}.log`), { flags: 'a' });
      child.stdout.pipe(file);
      child.stderr.pipe(file);
      return;
    }
    const prefix = `[${id}] `.padEnd(20);
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream.on('data', (chunk) => {
        const lines = (pending + chunk.toString()).split('\n');
        pending = lines.pop();
        for (const line of lines) process.stdout.write(`${prefix}${line}\n`);
      });
    }
  }

  /** Stops one process: SIGTERM (or the given signal), then SIGKILL after the grace period. */
  async stop(id, { signal = 'SIGTERM', graceMs = 10_000 } = {}) {
    const record = this.processes.get(id);
    if (!record) return;
    this.processes.delete(id);
    if (record.exited) return;
    const exited = new Promise((resolve) => record.child.once('exit', resolve));
    record.child.kill(signal);
    const timer = setTimeout(() => record.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  async stopAll() {
    this.stopping = true;
    const ids = [...this.processes.keys()].reverse();
    await Promise.all(ids.map((id) => this.stop(id)));
  }
}

module.exports = { Suite, APPS, freePort, httpStatus, root };
