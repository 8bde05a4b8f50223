import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SUITE_INFO_FILE = join(tmpdir(), `gateway-e2e-suite${process.env.TEST_NAMESPACE ? `-${process.env.TEST_NAMESPACE}` : ''}.json`);

export interface SuiteInfo {
  edgeA: string;
  edgeB: string;
  edgeAPort: number;
  env: Record<string, string>;
  logDir: string;
  /** The fake upstream providers (see fake-upstreams.ts): base URLs; `GET <url>/__requests` lists what they received. */
  fakeOpenAI: string;
  fakeAnthropic: string;
  /** The fake OTLP collector every service exports spans to (see fake-otlp-collector.ts); `GET <url>/__spans` lists them. */
  otlpCollector: string;
  /** The catalog the router serves (MODELS_CONFIG). */
  modelsConfig: string;
  /** The Chromium executable the browser tests launch (tools/scripts/lib/infra.js ensureChromium); empty when there is none. */
  chromium: string;
  /** Back-end service processes, so a test can kill one and start a replacement. */
  services: Record<string, { pid: number; healthPort: number; env?: Record<string, string> }>;
  /** The two edge processes (`edge-a`, `edge-b`) and their API ports, likewise. */
  edges: Record<string, { pid: number; port: number; env: Record<string, string> }>;
  /** The workspace root (dist/ lives there). */
  root: string;
}

let cached: SuiteInfo | undefined;

/** Where the running suite listens, as the global setup wrote it. */
export function suiteInfo(): SuiteInfo {
  cached ??= JSON.parse(readFileSync(SUITE_INFO_FILE, 'utf8')) as SuiteInfo;
  return cached;
}
