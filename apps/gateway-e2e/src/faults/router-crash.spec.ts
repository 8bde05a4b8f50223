/**
 * A router killed mid-stream (kill -9: no goodbye, no usage event) is noticed by the edge within a
 * few missed heartbeats: the client gets an error event in its format, the tokens that reached it
 * are billed once (the edge publishes the usage event), and the reservation is settled.
 */
import Redis from 'ioredis';
import { createAccount, ledgerEntry, TestAccount } from '../support/api';
import { newRequestId, openaiClient, withRequestId } from '../support/clients';
import { isRunning, replaceService, waitForExit } from '../support/processes';
import { suiteInfo } from '../support/suite-info';
import { UsageWatcher } from '../support/usage-events';

describe('a router that dies mid-stream', () => {
  let account: TestAccount;
  let usage: UsageWatcher;
  let redis: Redis;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
    redis = new Redis(suiteInfo().env.REDIS_URL);
  });

  afterAll(async () => {
    await usage?.close();
    await redis?.quit();
    const router = suiteInfo().services['inference-router'];
    if (!isRunning(router.pid)) await replaceService('inference-router');
  });

  it('ends the stream with an error event within seconds, bills what was relayed once, settles the reservation', async () => {
    const requestId = newRequestId('router-crash');
    const stream = await openaiClient(account.masterKey).chat.completions.create(
      { model: 'sim-long', stream: true, messages: [{ role: 'user', content: 'Tell me a long story' }] },
      withRequestId(requestId),
    );
    const router = suiteInfo().services['inference-router'];
    let deltas = 0;
    let killedAt = 0;
    let failure: unknown;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) deltas++;
        if (deltas === 10 && killedAt === 0) {
          process.kill(router.pid, 'SIGKILL');
          killedAt = Date.now();
        }
      }
    } catch (error) {
      failure = error;
    }
    const noticedAfterMs = Date.now() - killedAt;
    expect(killedAt).toBeGreaterThan(0);
    // The SDK raises the stream's error event; the default silence timeout is 6 s (3 heartbeats).
    expect(String((failure as Error)?.message)).toMatch(/did not answer in time|unavailable/);
    expect(noticedAfterMs).toBeLessThan(10_000);
    await waitForExit(router.pid);

    const events = await usage.single(requestId);
    expect(events).toMatchObject({ status: 'cancelled', model: 'sim-long', route: 'chat.completions' });
    // Each delta the client received is at least one token; the router never finished the answer.
    expect(events.outputTokens).toBeGreaterThanOrEqual(deltas);
    expect(events.inputTokens).toBeGreaterThan(0);

    const entries = [await ledgerEntry(account.masterKey, events.requestId)];
    expect(entries).toEqual([expect.objectContaining({ request_id: events.requestId, status: 'cancelled' })]);
    // Settled: the reservation is gone from the account's open reservations.
    const reservations = `resv:{${account.accountId}}`;
    for (let attempt = 0; attempt < 100 && (await redis.hexists(reservations, events.requestId)); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await redis.hexists(reservations, events.requestId)).toBe(0);

    await replaceService('inference-router');
    const after = await openaiClient(account.masterKey).chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'back?' }] });
    expect(after.choices[0].message.content).toBeTruthy();
  });
});
