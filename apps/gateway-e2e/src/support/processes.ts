import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { sleep } from './api';
import { SUITE_INFO_FILE, suiteInfo } from './suite-info';

/** Whether a process still runs (signal 0 only checks). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for a process to end (it was sent a signal); fails after `attempts` polls of 100 ms. */
export async function waitForExit(pid: number, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts && isRunning(pid); i++) await sleep(100);
  if (isRunning(pid)) throw new Error(`process ${pid} is still running`);
}

/** Polls `url` until it answers `status`; returns the last body. */
export async function waitForStatus(url: string, status: number, attempts = 300): Promise<any> {
  let last: { status: number; body: unknown } = { status: 0, body: undefined };
  for (let i = 0; i < attempts; i++) {
    try {
      const response = await fetch(url);
      last = { status: response.status, body: await response.json().catch(() => undefined) };
      if (last.status === status) return last.body;
    } catch {
      last = { status: 0, body: undefined };
    }
    await sleep(100);
  }
  throw new Error(`${url} answered ${last.status}, not ${status}`);
}

function spawnApp(app: string, env: Record<string, string>, logId: string): number {
  const { root, logDir } = suiteInfo();
  const log = openSync(join(logDir, `${logId}.log`), 'a');
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, 'dist/apps', app, 'src/main.js')], {
    cwd: root,
    env,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  // Not this test process's to wait for: the global teardown stops it.
  child.unref();
  return child.pid as number;
}

/**
 * Starts a replacement for a back-end service a test stopped, on the same health port, and waits
 * until it is ready. It serves the tests that follow; the global teardown stops it.
 */
export async function replaceService(app: string): Promise<void> {
  const info = suiteInfo();
  const service = info.services[app];
  const pid = spawnApp(app, { ...info.env, ...(service.env ?? {}), HEALTH_PORT: String(service.healthPort) }, app);
  service.pid = pid;
  writeFileSync(SUITE_INFO_FILE, JSON.stringify(info));
  await waitForStatus(`http://127.0.0.1:${service.healthPort}/readyz`, 200);
}

/** The same for an edge replica (`edge-a`, `edge-b`), on its API port. */
export async function replaceEdge(id: string): Promise<void> {
  const info = suiteInfo();
  const edge = info.edges[id];
  const pid = spawnApp('edge-gateway', { ...info.env, ...edge.env, PORT: String(edge.port) }, id);
  edge.pid = pid;
  writeFileSync(SUITE_INFO_FILE, JSON.stringify(info));
  await waitForStatus(`http://127.0.0.1:${edge.port}/readyz`, 200);
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls `url` until it answers 2xx; fails early when `child` exits. */
export async function untilReady(url: string, child: { exitCode: number | null }): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (
      await fetch(url).then(
        (response) => response.ok,
        () => false,
      )
    )
      return;
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    await sleep(100);
  }
  throw new Error(`${url} did not become ready`);
}

/**
 * Starts an edge beside the suite's two, with `env` over the suite's, on a free port, logging to
 * `<logId>.log`; resolves once it is ready. The caller stops it.
 */
export async function startExtraEdge(env: Record<string, string>, logId: string): Promise<{ edge: ChildProcess; base: string }> {
  const info = suiteInfo();
  const port = await freePort();
  const log = openSync(join(info.logDir, `${logId}.log`), 'a');
  const edge = spawn(process.execPath, [join(info.root, 'dist/apps/edge-gateway/src/main.js')], {
    env: { ...info.env, ...env, PORT: String(port) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const base = `http://127.0.0.1:${port}`;
  await untilReady(`${base}/readyz`, edge);
  return { edge, base };
}
