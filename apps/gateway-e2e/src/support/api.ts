import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { suiteInfo } from './suite-info';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Base URL: edge A by default. */
  base?: string;
}

/** One HTTP call to the gateway, as any client would make it. */
export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  // One turn of the event loop first: after the test process was blocked (the admin CLI of
  // `createAccount` runs synchronously), the closes of pooled connections the edge ended meanwhile
  // (idle past its keep-alive) are read before a request could be written to one of them.
  await new Promise((resolve) => setImmediate(resolve));
  const response = await fetch(`${options.base ?? suiteInfo().edgeA}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export interface TestAccount {
  accountId: string;
  masterKey: string;
}

/** `env` on top of the suite's, for a test whose services use another database URL. */
function adminCli(args: string[], env: Record<string, string> = {}): any {
  const entry = join(__dirname, '../../../../dist/apps/key-service/src/cli/admin.cli.js');
  const output = execFileSync(process.execPath, [entry, ...args, '--json'], { env: { ...suiteInfo().env, ...env }, encoding: 'utf8' });
  return JSON.parse(output.trim().split('\n').pop() as string);
}

/** A new account made the way an operator makes one: the admin CLI. */
export function createAccount(plan = 'pro', credits = '100', env: Record<string, string> = {}): TestAccount {
  const created = adminCli(['account', 'create', '--plan', plan, '--credits', credits], env);
  return { accountId: created.account_id, masterKey: created.master_key };
}

export function createDevPass(accountId: string): string {
  return adminCli(['devpass', 'create', '--account', accountId]).dev_key;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` holds for `samples` (what a running load appends to); fails naming `what` and the last sample. */
export async function untilSamples<S>(samples: S[], what: string, condition: (samples: S[]) => boolean, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!condition(samples)) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms; last: ${JSON.stringify(samples.at(-1))?.slice(0, 300)}`);
    await sleep(50);
  }
}

export interface ProxyKeyFields {
  name?: string;
  allocated_ammount?: number;
  expires_at?: number;
  model_whitelist?: string[];
  ip_whitelist?: string[];
  spend_window?: string | null;
}

export async function createProxyKey(masterKey: string, fields: ProxyKeyFields = {}): Promise<any> {
  const response = await api('POST', '/v1/auth/proxy/create', {
    key: masterKey,
    body: { name: 'test key', allocated_ammount: 5, ...fields },
  });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body;
}

/** The budgets (`GET /v1/key`, validate) of a proxy key made with `createProxyKey`'s defaults, 5 credits and no window, that spent nothing. */
export const UNSPENT_BUDGETS = [{ period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 5, used: 0, remaining: 5, resets_at: null }];

/** The ledger's entry for one request, once metering (asynchronous) has written it; bounded by `timeoutMs`. */
export async function ledgerEntry(key: string, requestId: string, options: { base?: string; timeoutMs?: number } = {}): Promise<any> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const response = await api('GET', `/v1/user/logs?request_id=${encodeURIComponent(requestId)}`, { key, base: options.base });
    if (response.status !== 200) throw new Error(`/v1/user/logs answered ${response.status}: ${response.text.slice(0, 300)}`);
    if (Array.isArray(response.body) && response.body.length === 1) return response.body[0];
    if (Date.now() > deadline) throw new Error(`request ${requestId} never reached the ledger: ${response.text.slice(0, 300)}`);
    await sleep(100);
  }
}
