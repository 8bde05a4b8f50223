import { readFileSync } from 'node:fs';
import { SUITE_INFO_FILE, SuiteInfo } from './suite-info';

/** Processes a test started in place of a suite service it killed (the suite does not own them). */
function stopReplacements(suitePids: Set<number>): void {
  let info: SuiteInfo;
  try {
    info = JSON.parse(readFileSync(SUITE_INFO_FILE, 'utf8')) as SuiteInfo;
  } catch {
    return;
  }
  for (const { pid } of [...Object.values(info.services ?? {}), ...Object.values(info.edges ?? {})]) {
    if (suitePids.has(pid)) continue;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__gatewaySuite as
    | {
        suite: { stopAll(): Promise<void>; processes: Map<string, { child: { pid?: number } }> };
        nats: { stop(): Promise<void> | void };
        stopExtras?: () => Promise<void>;
      }
    | undefined;
  if (!handle) return;
  try {
    stopReplacements(new Set([...handle.suite.processes.values()].map((record) => record.child.pid as number)));
    await handle.suite.stopAll();
    await handle.nats.stop();
  } finally {
    await handle.stopExtras?.();
  }
}
