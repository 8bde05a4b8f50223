import { spawn, type ChildProcess } from 'node:child_process';

// Plain-JS tooling shared with `npm start`.
const { natsServerBinary, waitForPort } = require('../scripts/lib/infra');
const { freePort } = require('../scripts/lib/suite');

export interface TestNatsServer {
  url: string;
  stop(): void;
}

/**
 * A NATS server of the test's own on a free port (the subjects a test uses are the real ones, so a
 * suite running on this machine must not hear them); the machine's NATS (`NATS_URL`) when no
 * nats-server binary is installed.
 */
export async function startTestNatsServer(): Promise<TestNatsServer> {
  const binary = natsServerBinary();
  if (!binary) return { url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', stop: () => undefined };
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  if (!(await waitForPort('127.0.0.1', port, 10))) {
    child.kill('SIGKILL');
    throw new Error('the test NATS server did not start');
  }
  return { url: `nats://127.0.0.1:${port}`, stop: () => void child.kill('SIGTERM') };
}
