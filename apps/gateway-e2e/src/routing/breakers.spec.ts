/**
 * Circuit breakers: a failing route stops receiving traffic once its breaker opens and gets it back
 * after the cooldown (one probe), and every router replica shares the breakers through Redis — one
 * that starts later, and one that runs while another opens a route.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { api, createAccount, TestAccount } from '../support/api';
import { freePort, untilReady, waitForExit } from '../support/processes';
import { suiteInfo } from '../support/suite-info';
import { callsDuring, chat, many, poolCalls, routerMetricsUrl, routeState, setPool, until } from './pools';

const OPEN = 2;
const CLOSED = 0;

/** A second inference-router replica (same queue group, same Redis), on its own health port. */
async function startRouterReplica(): Promise<{ child: ChildProcess; metrics: string }> {
  const info = suiteInfo();
  const healthPort = await freePort();
  const log = openSync(join(info.logDir, 'inference-router-routing-replica.log'), 'a');
  const child = spawn(process.execPath, [join(info.root, 'dist/apps/inference-router/src/main.js')], {
    env: { ...info.env, ...(info.services['inference-router'].env ?? {}), HEALTH_PORT: String(healthPort) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  await untilReady(`http://127.0.0.1:${healthPort}/readyz`, child);
  return { child, metrics: routerMetricsUrl(healthPort) };
}

describe('routing: circuit breakers', () => {
  let account: TestAccount;
  let counter = 0;
  const send = (model: string) => chat(account.masterKey, model, `breaker request ${counter++}`);

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('stops sending to a failing route once its breaker opens, and sends to it again after the cooldown', async () => {
    await setPool('pool-breaker-a', 'fail');
    try {
      // Every request is still answered: the other route takes over while the breaker counts.
      await until(
        'route-breaker/a opened',
        async () => (await routeState('route-breaker/a')) === OPEN,
        async () => expect((await send('route-breaker')).status).toBe(200),
      );
      const whileOpen = await callsDuring(async () => {
        const responses = await many(10, 2, () => send('route-breaker'));
        expect(responses.map((response) => response.status)).toEqual(new Array(10).fill(200));
      });
      // The cooldown is 2 s: these ten take far less, and none reached the open route.
      expect(whileOpen['pool-breaker-a']).toBeUndefined();
      expect(whileOpen['pool-breaker-b']).toBe(10);
    } finally {
      await setPool('pool-breaker-a', 'ok');
    }
    // After the cooldown one probe succeeds and closes the breaker; the route is back in rotation.
    await until(
      'route-breaker/a served again',
      async () => (await routeState('route-breaker/a')) === CLOSED && ((await poolCalls())['pool-breaker-a'] ?? 0) > 0,
      async () => expect((await send('route-breaker')).status).toBe(200),
    );
    const after = await callsDuring(() => many(40, 4, () => send('route-breaker')));
    expect(after['pool-breaker-a']).toBeGreaterThan(5);
  });

  it("answers 429 with the remaining Retry-After, in either format, when the only route is open after its upstream's 429", async () => {
    // A 429 with Retry-After opens the only route for that long (too long to wait out within the request).
    await setPool('pool-all-open-only', 'limit', 90);
    try {
      // The upstream's own 429 reaches the client as it is.
      expect((await send('route-all-open')).status).toBe(429);
      const refused = await callsDuring(async () => {
        const response = await send('route-all-open');
        expect(response.status).toBe(429);
        const wait = Number(response.headers.get('retry-after'));
        expect(wait).toBeGreaterThan(60);
        expect(wait).toBeLessThanOrEqual(90);
        expect(response.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.stringMatching(/rate limited/) });
        const messages = await api('POST', '/v1/messages', {
          key: account.masterKey,
          body: { model: 'route-all-open', max_tokens: 16, messages: [{ role: 'user', content: 'breaker request in Messages format' }] },
        });
        expect(messages.status).toBe(429);
        expect(Number(messages.headers.get('retry-after'))).toBeGreaterThan(60);
        expect(messages.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      });
      expect(refused).toEqual({});
      const listed = await api('GET', '/v1/models', { key: account.masterKey });
      expect(listed.body.data.map((model: { id: string }) => model.id)).toContain('route-all-open');
    } finally {
      await setPool('pool-all-open-only', 'ok');
    }
  });

  it('answers 503 with Retry-After without asking the upstream when the only route is open because it fails', async () => {
    await setPool('pool-failing-only', 'fail');
    try {
      await until(
        'route-failing-only/only opened',
        async () => (await routeState('route-failing-only/only')) === OPEN,
        async () => expect((await send('route-failing-only')).status).toBeGreaterThanOrEqual(500),
      );
      const refused = await callsDuring(async () => {
        const response = await send('route-failing-only');
        expect(response.status).toBe(503);
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(60);
        expect(response.body.error.message).toMatch(/unavailable/);
      });
      expect(refused).toEqual({});
    } finally {
      await setPool('pool-failing-only', 'ok');
    }
  });

  it('waits out a single 429 with a short Retry-After on the last route, and serves the request', async () => {
    await setPool('pool-wait-once', 'limit_once', 1);
    const calls = await callsDuring(async () => {
      const response = await send('route-wait-once');
      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toEqual(expect.any(String));
    });
    // The 429, then the request again once its Retry-After had passed; the route is in rotation again.
    expect(calls).toEqual({ 'pool-wait-once': 2 });
    expect(await routeState('route-wait-once/only')).toBe(CLOSED);
  });

  describe('with a second router replica', () => {
    let replica: { child: ChildProcess; metrics: string } | undefined;

    afterAll(async () => {
      if (replica?.child.pid && replica.child.exitCode === null) {
        replica.child.kill('SIGTERM');
        await waitForExit(replica.child.pid);
      }
    });

    it('a replica that starts after a route opened sees it open, and sends it nothing', async () => {
      await setPool('pool-shared-start-a', 'fail');
      // Only the suite's router runs: it opens the route (4 failures, 2 attempts per request).
      await until(
        'route-shared-start/a opened',
        async () => (await routeState('route-shared-start/a')) === OPEN,
        async () => expect((await send('route-shared-start')).status).toBe(200),
      );
      replica = await startRouterReplica();
      expect(await routeState('route-shared-start/a', replica.metrics)).toBe(OPEN);
      const calls = await callsDuring(() => many(20, 4, () => send('route-shared-start')));
      expect(calls['pool-shared-start-a']).toBeUndefined();
      expect(calls['pool-shared-start-b']).toBe(20);
    });

    it('failures on either replica count toward one breaker, which opens on both', async () => {
      const live = replica!;
      await setPool('pool-shared-live-a', 'fail');
      const bothOpen = async () => (await routeState('route-shared-live/a')) === OPEN && (await routeState('route-shared-live/a', live.metrics)) === OPEN;
      await until('route-shared-live/a open on both replicas', bothOpen, async () => expect((await send('route-shared-live')).status).toBe(200));
      // Four failures open it (its breaker.failures): per-replica breakers would need four on each.
      expect((await poolCalls())['pool-shared-live-a']).toBeLessThanOrEqual(5);
      const calls = await callsDuring(() => many(20, 4, () => send('route-shared-live')));
      expect(calls['pool-shared-live-a']).toBeUndefined();
    });
  });
});
