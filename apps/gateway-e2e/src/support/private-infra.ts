/**
 * Infrastructure a fault test owns and may kill: its own NATS and Redis servers, service processes
 * pointed at them, and a TCP proxy to PostgreSQL that can be cut. The suite's shared NATS, Redis and
 * database stay untouched, so other tests running at the same time never see the outage.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './api';
import { freePort } from './processes';
import { suiteInfo } from './suite-info';

// Tooling shared with `npm start`: plain JS outside any project, so the boundary rule does not apply.
/* eslint-disable @nx/enforce-module-boundaries */
const { natsServerBinary, waitForPort } = require('../../../../tools/scripts/lib/infra');
/* eslint-enable @nx/enforce-module-boundaries */

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A server process that can be killed and started again on the same port (and, for NATS, the same store). */
export class RestartableServer {
  private child?: ChildProcess;

  private constructor(
    private readonly command: string,
    private readonly args: string[],
    readonly port: number,
    private readonly cleanup: () => void,
  ) {}

  static async nats(): Promise<RestartableServer> {
    const binary = natsServerBinary();
    if (!binary) throw new Error('nats-server is not installed');
    const port = await freePort();
    const storeDir = mkdtempSync(join(tmpdir(), 'gateway-e2e-fault-nats-'));
    const server = new RestartableServer(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], port, () =>
      rmSync(storeDir, { recursive: true, force: true, maxRetries: 3 }),
    );
    await server.start();
    return server;
  }

  static async redis(): Promise<RestartableServer> {
    const port = await freePort();
    const server = new RestartableServer(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      port,
      () => undefined,
    );
    await server.start();
    return server;
  }

  get url(): string {
    return this.command === 'redis-server' ? `redis://127.0.0.1:${this.port}/0` : `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(this.command, this.args, { stdio: 'ignore' });
    if (!(await waitForPort('127.0.0.1', this.port, 20))) throw new Error(`${this.command} did not start on ${this.port}`);
  }

  /** kill -9: no goodbye to the clients, as in a crash. */
  async kill(): Promise<void> {
    if (this.child) await stopChild(this.child, 'SIGKILL');
  }

  async stop(): Promise<void> {
    if (this.child) await stopChild(this.child);
    this.cleanup();
  }
}

export interface AppProcess {
  app: string;
  child: ChildProcess;
  /** The health port of a service, the API port of an edge. */
  port: number;
  base: string;
}

/**
 * Starts one app from dist/ with the suite's environment under `env`, logging to `<logId>.log`;
 * resolves once `probe` (`/readyz` by default) answers 200.
 */
export async function startApp(app: string, env: Record<string, string>, logId: string, probe = '/readyz'): Promise<AppProcess> {
  const info = suiteInfo();
  const port = await freePort();
  const portEnv = app === 'edge-gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
  const log = openSync(join(info.logDir, `${logId}.log`), 'a');
  const child = spawn(process.execPath, ['--enable-source-maps', join(info.root, 'dist/apps', app, 'src/main.js')], {
    cwd: info.root,
    env: { ...info.env, ...env, ...portEnv },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await fetch(`${base}${probe}`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    if (child.exitCode !== null) throw new Error(`${logId} exited with ${child.exitCode} (see ${join(info.logDir, `${logId}.log`)})`);
    if (Date.now() > deadline) {
      // Not left running: the caller gets no handle to stop it with.
      child.kill('SIGKILL');
      throw new Error(`${logId}: ${probe} did not answer 200 within 60 s`);
    }
    await sleep(150);
  }
  return { app, child, port, base };
}

/** Every back-end service of the suite, in the order a suite of a test's own starts them. */
export const SUITE_SERVICES = ['key-service', 'account-service', 'metering-service', 'inference-router', 'video-worker'];

/**
 * A suite of a test's own on `env` (its own NATS, Redis, ...): `services` one by one (each with its
 * `perApp` variables on top), then an edge, logged as `<label>-<app>.log`. Each is added to `apps`
 * as soon as it runs, so the caller's `stopApps(apps)` stops them even when a later one fails.
 */
export async function startSuite(
  apps: AppProcess[],
  env: Record<string, string>,
  label: string,
  { services = SUITE_SERVICES, perApp = {} }: { services?: string[]; perApp?: Record<string, Record<string, string>> } = {},
): Promise<AppProcess> {
  for (const app of services) apps.push(await startApp(app, { ...env, ...perApp[app] }, `${label}-${app}`));
  const edge = await startApp('edge-gateway', env, `${label}-edge`);
  apps.push(edge);
  return edge;
}

export async function stopApps(apps: AppProcess[]): Promise<void> {
  await Promise.all(apps.map((app) => stopChild(app.child)));
}

/** A TCP proxy to `host:port` that can be cut: `close()` drops every connection and refuses new ones. */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  readonly port: number;

  private constructor(
    private readonly target: { host: string; port: number },
    port: number,
  ) {
    this.port = port;
  }

  static async to(host: string, port: number): Promise<CuttableProxy> {
    const proxy = new CuttableProxy({ host, port }, await freePort());
    await proxy.open();
    return proxy;
  }

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  async close(): Promise<void> {
    const closed = this.server ? once(this.server, 'close') : Promise.resolve();
    this.server?.close();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
