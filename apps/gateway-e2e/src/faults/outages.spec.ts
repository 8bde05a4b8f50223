/**
 * NATS and Redis outages under light load, on servers of this test's own (the suite's are shared
 * with every other test): while one is down, requests answer 503 in the route's format with
 * `Retry-After`, never 500 and never hanging; once it is back, requests succeed again within
 * seconds, and a usage event of a request after the recovery reaches the ledger (the metering
 * consumer was re-established). Every process stays alive (`/healthz` 200) throughout: an outage
 * must not make the orchestrator restart pods, and must not leave one alive but useless.
 *
 * `OUTAGE_SECONDS` sets the length of each outage: 25 in `npm test`, longer than the ~20 s after
 * which nats.js used to give up reconnecting for good; the figure is `OUTAGE_SECONDS=60`.
 */
import { get } from 'node:http';
import { api, createAccount, ledgerEntry, sleep, TestAccount } from '../support/api';
import { AppProcess, RestartableServer, startSuite, stopApps } from '../support/private-infra';

const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 25) * 1000;
/** No request may take longer than this, outage or not (the edge's NATS timeout is 5 s). */
const REQUEST_BOUND_MS = 20_000;
/** Back within this after the server is: "within seconds", with room for a loaded machine. */
const RECOVERY_BOUND_MS = 30_000;

interface Sample {
  startedAt: number;
  endedAt: number;
  status: number;
  retryAfter: string | null;
  body: any;
}

/** A chat completion every ~200 ms, one at a time, recording what each answered. */
class LightLoad {
  readonly samples: Sample[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const startedAt = Date.now();
      let sample: Sample;
      try {
        const response = await fetch(`${this.base}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'ping' }] }),
          signal: AbortSignal.timeout(REQUEST_BOUND_MS),
        });
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // kept as text
        }
        sample = { startedAt, endedAt: Date.now(), status: response.status, retryAfter: response.headers.get('retry-after'), body };
      } catch (error) {
        // Status 0: no answer within the bound (or no connection at all).
        sample = { startedAt, endedAt: Date.now(), status: 0, retryAfter: null, body: String(error) };
      }
      this.samples.push(sample);
      await sleep(200);
    }
  }

  /** Waits until a request started at or after `since` answered `status`. */
  async until(status: number, since: number, boundMs: number): Promise<Sample> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const found = this.samples.find((sample) => sample.startedAt >= since && sample.status === status);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${status} within ${boundMs} ms; last: ${JSON.stringify(this.samples.at(-1))}`);
      await sleep(100);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/**
 * A fresh connection each time (no keep-alive): a pooled socket the server closes as idle just as it
 * is reused would fail the probe for a reason that is no process's.
 */
function healthStatus(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: REQUEST_BOUND_MS }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (error) => resolve(String(error)));
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_BOUND_MS} ms`)));
  });
}

/** Polls every process's `/healthz`, recording any answer but 200. */
class LivenessWatch {
  readonly failures: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly apps: AppProcess[]) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await Promise.all(
        this.apps.map(async (app) => {
          const status = await healthStatus(`${app.base}/healthz`);
          if (status !== 200) this.failures.push(`${app.app} /healthz ${status} at ${new Date().toISOString()}`);
          if (app.child.exitCode !== null) this.failures.push(`${app.app} exited with ${app.child.exitCode}`);
        }),
      );
      await sleep(500);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

async function untilStatus(url: string, status: number, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (last === status) return;
    await sleep(200);
  }
  throw new Error(`${url} answered ${last}, not ${status}, for ${boundMs} ms`);
}

describe('NATS and Redis outages under light load', () => {
  let nats: RestartableServer;
  let redis: RestartableServer;
  const apps: AppProcess[] = [];
  let edge: AppProcess;
  let router: AppProcess;
  let account: TestAccount;
  let liveness: LivenessWatch;

  beforeAll(async () => {
    nats = await RestartableServer.nats();
    redis = await RestartableServer.redis();
    const env = { NATS_URL: nats.url, REDIS_URL: redis.url };
    edge = await startSuite(apps, env, 'outage', {
      perApp: { 'inference-router': { UPSTREAM_RETRY_BASE_MS: '20' }, 'metering-service': { METERING_ACK_WAIT_MS: '2000' } },
    });
    router = apps.find((app) => app.app === 'inference-router') as AppProcess;
    account = createAccount('enterprise', '100');
    liveness = new LivenessWatch(apps);
  }, 180_000);

  afterAll(async () => {
    await liveness?.stop();
    await stopApps(apps);
    await nats?.stop();
    await redis?.stop();
  });

  /**
   * Kills `server` for OUTAGE_MS under light load and starts it again on the same port; checks what
   * the requests answered meanwhile and that they succeed again within RECOVERY_BOUND_MS.
   */
  async function outage(server: RestartableServer, notReady: AppProcess): Promise<{ during: Sample[]; recoveredAfterMs: number }> {
    const load = new LightLoad(edge.base, account.masterKey);
    try {
      await load.until(200, 0, RECOVERY_BOUND_MS);
      await server.kill();
      const killedAt = Date.now();
      await load.until(503, killedAt, REQUEST_BOUND_MS);
      // Readiness drops while the connection is down, so a load balancer stops sending traffic.
      await untilStatus(`${notReady.base}/readyz`, 503, REQUEST_BOUND_MS);
      // The outage itself lasts a fixed time: its length is what this test is about.
      await sleep(Math.max(0, killedAt + OUTAGE_MS - Date.now()));
      const restartedAt = Date.now();
      await server.start();
      const recovered = await load.until(200, restartedAt, RECOVERY_BOUND_MS);
      await untilStatus(`${notReady.base}/readyz`, 200, RECOVERY_BOUND_MS);
      await load.stop();
      const unexpected = load.samples.filter((sample) => sample.status !== 200 && sample.status !== 503);
      expect(unexpected).toEqual([]);
      const during = load.samples.filter((sample) => sample.startedAt >= killedAt && sample.endedAt <= restartedAt);
      return { during, recoveredAfterMs: recovered.endedAt - restartedAt };
    } finally {
      await load.stop();
    }
  }

  function expectUnavailable(during: Sample[]): void {
    expect(during.length).toBeGreaterThan(0);
    for (const sample of during) {
      expect({ status: sample.status, body: sample.body }).toMatchObject({
        status: 503,
        body: { error: { type: 'service_unavailable_error', code: 'service_unavailable' } },
      });
      expect(Number(sample.retryAfter)).toBeGreaterThan(0);
    }
  }

  async function expectBilledAfterRecovery(): Promise<void> {
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      base: edge.base,
      body: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'billed?' }] },
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const entries = [await ledgerEntry(account.masterKey, requestId!, { base: edge.base, timeoutMs: 30_000 })];
    expect(entries).toEqual([expect.objectContaining({ request_id: requestId })]);
  }

  it(
    `a NATS outage of ${OUTAGE_MS / 1000} s: 503 meanwhile, 200 within seconds of its return, usage metered again`,
    async () => {
      const { during, recoveredAfterMs } = await outage(nats, router);
      expectUnavailable(during);
      expect(recoveredAfterMs).toBeLessThan(RECOVERY_BOUND_MS);
      await expectBilledAfterRecovery();
      expect(liveness.failures).toEqual([]);
    },
    OUTAGE_MS + 120_000,
  );

  it(
    `a Redis outage of ${OUTAGE_MS / 1000} s: 503 meanwhile, 200 within seconds of its return`,
    async () => {
      const { during, recoveredAfterMs } = await outage(redis, edge);
      expectUnavailable(during);
      expect(recoveredAfterMs).toBeLessThan(RECOVERY_BOUND_MS);
      await expectBilledAfterRecovery();
      expect(liveness.failures).toEqual([]);
    },
    OUTAGE_MS + 120_000,
  );
});
