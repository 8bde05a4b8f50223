/**
 * Steady load through a failover, and what the ledger holds afterwards: the high-availability
 * specs (ha/*.spec.ts) run it against suites on Redis Cluster, Sentinel and a NATS cluster.
 */
import { Client } from 'pg';
import { api, createAccount, sleep, untilSamples } from '../support/api';
import { storedKey } from '../support/keys-db';
import { suiteInfo } from '../support/suite-info';

export interface Sample {
  kind: 'chat' | 'stream';
  startedAt: number;
  endedAt: number;
  status: number;
  requestId: string | null;
  retryAfter: string | null;
  body: any;
  /** A stream that ended with [DONE]. */
  complete?: boolean;
}

const CHAT = { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'through the failover' }] };
/** No request may take longer, failover or not: one that does is a sample of status 0 (unexpected), not a hung test. */
const REQUEST_BOUND_MS = 30_000;

/** Chats, streamed and not, `workers` at a time on one key, until stopped or the key is refused (402). */
export class FailoverLoad {
  readonly samples: Sample[] = [];
  private running = true;
  private readonly done: Promise<void[]>;

  constructor(
    private readonly base: string,
    private readonly key: string,
    workers = 6,
  ) {
    this.done = Promise.all(Array.from({ length: workers }, (_, index) => this.worker(index % 2 === 0 ? 'chat' : 'stream')));
  }

  private async worker(kind: Sample['kind']): Promise<void> {
    while (this.running) {
      const sample = await this.once(kind);
      this.samples.push(sample);
      if (sample.status === 402) return;
      // A 503 or 429 says when to come back; a short pause keeps the outage sampled.
      if (sample.status !== 200) await sleep(100);
    }
  }

  private async once(kind: Sample['kind']): Promise<Sample> {
    const startedAt = Date.now();
    try {
      const response = await fetch(`${this.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(kind === 'stream' ? { ...CHAT, stream: true, stream_options: { include_usage: true } } : CHAT),
        signal: AbortSignal.timeout(REQUEST_BOUND_MS),
      });
      const text = await response.text();
      let body: any = text;
      try {
        body = kind === 'chat' || response.status !== 200 ? JSON.parse(text) : text;
      } catch {
        // kept as text
      }
      return {
        kind,
        startedAt,
        endedAt: Date.now(),
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        retryAfter: response.headers.get('retry-after'),
        body,
        complete: kind === 'stream' && response.status === 200 ? text.includes('data: [DONE]') : undefined,
      };
    } catch (error) {
      return { kind, startedAt, endedAt: Date.now(), status: 0, requestId: null, retryAfter: null, body: String(error) };
    }
  }

  /** Polls until `condition` holds for the samples so far. */
  until(what: string, condition: (samples: Sample[]) => boolean, boundMs = 90_000): Promise<void> {
    return untilSamples(this.samples, what, condition, boundMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** Whether a stream's text ends with the error event of a 503 (`service_unavailable`): a cut the client may retry. */
function endsRetryable(text: unknown): boolean {
  const last =
    String(text)
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .at(-1) ?? '';
  try {
    return JSON.parse(last.slice('data: '.length))?.error?.code === 'service_unavailable';
  } catch {
    return false;
  }
}

export interface LedgerCheck {
  served: number;
  unavailable: number;
  /** From the first 503 to the end of the last one, in seconds (0 without any). */
  unavailableSeconds: number;
  /** Answered 2xx but not in the ledger. */
  lost: number;
  /** In the ledger more than once, or without a 2xx answer. */
  doubled: number;
  /**
   * Charged although the client got an error status (an answer lost with a NATS server after the
   * router had finished the request must be voided by the edge: docs/api.md).
   */
  chargedWithoutAnswer: number;
  /** Spent beyond the key's allocation, in credits. */
  overspend: number;
  /** Streams answered 200 that the failover cut: they end with a 503's error event instead of [DONE], and bill what they relayed. */
  cut: number;
  unexpected: { status: number; body: unknown }[];
}

/**
 * Waits until the ledger holds an entry for every 2xx (metering catches up asynchronously), then
 * compares: each served request exactly once, nothing charged that was not served, the key within
 * its allocation. `since` bounds the 503 period measured (the failover's start).
 */
export async function checkLedger(samples: Sample[], keyId: string, allocation: number, since: number): Promise<LedgerCheck> {
  const served = samples.filter((sample) => sample.status === 200);
  const servedIds = new Set(served.map((sample) => sample.requestId));
  const client = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
  await client.connect();
  try {
    const rows = async () =>
      (await client.query<{ request_id: string; credits: string }>('SELECT request_id, credits::text FROM usage_logs WHERE key_id = $1', [keyId])).rows;
    const deadline = Date.now() + 60_000;
    let ledger = await rows();
    while (served.some((sample) => !ledger.some((row) => row.request_id === sample.requestId)) && Date.now() < deadline) {
      await sleep(200);
      ledger = await rows();
    }
    const counts = new Map<string, number>();
    for (const row of ledger) counts.set(row.request_id, (counts.get(row.request_id) ?? 0) + 1);
    const spent = ledger.reduce((sum, row) => sum + Number(row.credits), 0);
    const unavailable = samples.filter((sample) => sample.status === 503 && sample.endedAt >= since);
    const first = Math.min(...unavailable.map((sample) => sample.startedAt));
    const last = Math.max(...unavailable.map((sample) => sample.endedAt));
    return {
      served: served.length,
      unavailable: unavailable.length,
      unavailableSeconds: unavailable.length > 0 ? Math.round((last - first) / 100) / 10 : 0,
      lost: served.filter((sample) => !counts.has(sample.requestId as string)).length,
      doubled: [...counts.values()].filter((count) => count > 1).length,
      chargedWithoutAnswer: ledger.filter((row) => !servedIds.has(row.request_id) && Number(row.credits) > 0).length,
      overspend: Math.max(0, spent - allocation),
      cut: served.filter((sample) => sample.complete === false).length,
      unexpected: samples
        .filter(
          (sample) =>
            ![200, 402, 429, 503].includes(sample.status) ||
            (sample.status !== 200 && sample.status !== 402 && !sample.retryAfter) ||
            (sample.complete === false && !endsRetryable(sample.body)),
        )
        .map(({ status, body }) => ({ status, body })),
    };
  } finally {
    await client.end();
  }
}

/** A chat with `key` answers 200 within the bound, a 503 (with Retry-After) tried again after it. */
async function servedAgain(base: string, key: string, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const chat = await api('POST', '/v1/chat/completions', { key, base, body: CHAT });
    if (chat.status === 200) return;
    if (chat.status !== 503 || Date.now() > deadline) throw new Error(`not served again after the failover: ${chat.status} ${JSON.stringify(chat.body)}`);
    await sleep(Number(chat.headers.get('retry-after') ?? 1) * 1000);
  }
}

/**
 * A proxy key spent by steady load while `failover` runs (it kills something and resolves once the
 * set-up serves again), until the key is refused for its allocation; then the ledger is checked and
 * the figures printed under `label`. Fails on any 500, lost or doubled charge, or overspend.
 */
export async function spendThroughFailover(
  base: string,
  label: string,
  failover: (accountId: string) => Promise<void>,
  redis: { get(key: string): Promise<string | null> },
  allocation = 0.015,
): Promise<LedgerCheck> {
  const owner = createAccount('enterprise', '100');
  const created = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, base, body: { name: 'failover', allocated_ammount: allocation } });
  expect(created.status).toBe(201);
  const proxyKey: string = created.body.key;
  const { id: keyId } = await storedKey(proxyKey);

  const load = new FailoverLoad(base, proxyKey);
  let failedAt = 0;
  try {
    await load.until('a steady load', (samples) => samples.filter((sample) => sample.status === 200).length >= 40);
    failedAt = Date.now();
    await failover(owner.accountId);
    const healedAt = Date.now();
    const servedSince = (samples: Sample[]) => samples.some((sample) => sample.startedAt > healedAt && sample.status === 200);
    await load.until(
      'served after the failover, or the allocation spent',
      (samples) => servedSince(samples) || samples.some((sample) => sample.status === 402),
    );
    if (!servedSince(load.samples)) {
      // The load spent the key during the failover: the owner's own key shows the set-up serves again.
      await servedAgain(base, owner.masterKey);
    }
    await load.until('the allocation spent (402)', (samples) => samples.some((sample) => sample.status === 402), 120_000);
  } finally {
    await load.stop();
  }
  const figures = await checkLedger(load.samples, keyId, allocation, failedAt);
  console.log(
    `${label}: ${figures.served} served, ${figures.unavailable} answered 503 over ${figures.unavailableSeconds} s, ` +
      `lost ${figures.lost}, doubled ${figures.doubled}, charged without an answer ${figures.chargedWithoutAnswer}, overspend ${figures.overspend}`,
  );
  // A Redis failover refuses at admission, before the router; an answer lost with a NATS server
  // after the router finished is voided by the edge: nothing answered with an error is charged.
  expect(figures).toMatchObject({ lost: 0, doubled: 0, chargedWithoutAnswer: 0, overspend: 0, unexpected: [] });
  for (const sample of load.samples.filter((sample) => sample.status === 503)) {
    expect(sample.body.error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
  }
  // Every request was settled in Redis too (metering's script on the account's slot): no
  // reservation is left open on the account or the key.
  const open = async () => [await redis.get(`resv:{${owner.accountId}}:total`), await redis.get(`resv:{${owner.accountId}}:key:${keyId}:total`)];
  const deadline = Date.now() + 30_000;
  while ((await open()).some((total) => Number(total ?? 0) !== 0) && Date.now() < deadline) await sleep(200);
  expect((await open()).map((total) => Number(total ?? 0))).toEqual([0, 0]);
  return figures;
}
