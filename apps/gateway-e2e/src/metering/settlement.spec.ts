/**
 * The shared budget in Redis (what the edges reserve against and metering settles) moves by a
 * request's cost exactly once: a redelivered usage event settles nothing twice, and one whose first
 * delivery was written to the ledger but never settled (metering died in between) settles now.
 */
import { randomUUID } from 'node:crypto';
import { BudgetStore, ReserveRequest, toNano } from '@gateway/billing';
import Redis from 'ioredis';
import { suiteInfo } from '../support/suite-info';

describe('budget settlement', () => {
  let redis: Redis;
  let store: BudgetStore;

  beforeAll(() => {
    redis = new Redis(suiteInfo().env.REDIS_URL);
    store = new BudgetStore(redis);
  });

  beforeEach(async () => {
    // The edges mark Redis's budget state trustworthy at start (and after a loss): admit refuses everything until then.
    const deadline = Date.now() + 30_000;
    while ((await store.generation()) === null) {
      if (Date.now() > deadline) throw new Error('the budget generation marker never appeared');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    await redis?.quit();
  });

  /** Admission with the gate wide open (no epoch to check, limits no test reaches): the reservation alone. */
  const reserve = (request: ReserveRequest) =>
    store.admit(request, {
      accountId: request.accountId,
      expectedEpoch: '',
      minute: Math.floor(Date.now() / 60_000),
      requestsPerMinute: 1_000_000,
      tokensPerMinute: 1_000_000,
      tokens: 0,
    });
  const balance = async (accountId: string) => Number(await redis.get(`bal:{${accountId}}`));

  it('moves the cached balance by the real cost once, however often the request is settled', async () => {
    const accountId = `acct_settle_${randomUUID()}`;
    await store.primeBalance(accountId, toNano(10));
    expect(await reserve({ accountId, requestId: 'req_a', costNano: toNano(3), ttlMs: 60_000 })).toMatchObject({ ok: true });
    await store.settle({ accountId, requestId: 'req_a', costNano: toNano(2) });
    await store.settle({ accountId, requestId: 'req_a', costNano: toNano(2) }); // the same usage event delivered again
    expect(await balance(accountId)).toBe(toNano(8));
    // Nothing is left reserved: 8 credits can be reserved in full.
    expect(await reserve({ accountId, requestId: 'req_b', costNano: toNano(8), ttlMs: 60_000 })).toMatchObject({ ok: true });
    expect(await reserve({ accountId, requestId: 'req_c', costNano: 1, ttlMs: 60_000 })).toMatchObject({ ok: false, reason: 'credits' });
  });

  it('a released reservation (no usage event coming) frees its credits and charges nothing', async () => {
    const accountId = `acct_settle_${randomUUID()}`;
    await store.primeBalance(accountId, toNano(5));
    await reserve({ accountId, requestId: 'req_a', costNano: toNano(5), ttlMs: 60_000 });
    await store.release(accountId, 'req_a');
    // A late settle of the released request changes nothing in the cache (the ledger is the truth,
    // and the cache is reloaded from it).
    await store.settle({ accountId, requestId: 'req_a', costNano: toNano(1) });
    expect(await balance(accountId)).toBe(toNano(5));
  });

  it("settles a proxy key's spend once too", async () => {
    const accountId = `acct_settle_${randomUUID()}`;
    const proxy = { keyId: `key_${randomUUID()}`, windowId: 'life' };
    await store.primeBalance(accountId, toNano(100));
    await store.primeKeySpend(accountId, proxy.keyId, proxy.windowId, 0, 60);
    await reserve({ accountId, requestId: 'req_p', costNano: toNano(4), ttlMs: 60_000, proxy: { ...proxy, allocationNano: toNano(5) } });
    await store.settle({ accountId, requestId: 'req_p', costNano: toNano(4), proxy });
    await store.settle({ accountId, requestId: 'req_p', costNano: toNano(4), proxy });
    expect(Number(await redis.get(`pused:{${accountId}}:${proxy.keyId}:life`))).toBe(toNano(4));
    expect(await reserve({ accountId, requestId: 'req_q', costNano: toNano(1), ttlMs: 60_000, proxy: { ...proxy, allocationNano: toNano(5) } })).toMatchObject({
      ok: true,
    });
    expect(await reserve({ accountId, requestId: 'req_r', costNano: 1, ttlMs: 60_000, proxy: { ...proxy, allocationNano: toNano(5) } })).toMatchObject({
      ok: false,
      reason: 'allocation',
    });
  });

  it('a settlement made while the cached figures were absent still counts when a prime that read the ledger before it writes after it', async () => {
    const accountId = `acct_settle_${randomUUID()}`;
    const proxy = { keyId: `key_${randomUUID()}`, windowId: 'life' };
    const spend = async () => Number(await redis.get(`pused:{${accountId}}:${proxy.keyId}:life`));
    await store.primeBalance(accountId, toNano(100));
    await store.primeKeySpend(accountId, proxy.keyId, proxy.windowId, toNano(1), 60);
    await reserve({ accountId, requestId: 'req_l', costNano: toNano(2), ttlMs: 60_000, proxy: { ...proxy, allocationNano: toNano(5) } });
    // Both cached figures expire while the request is in flight ...
    await redis.del(`bal:{${accountId}}`, `pused:{${accountId}}:${proxy.keyId}:life`);
    // ... an edge reads the ledger for its prime (100 credits, 1 spent); the request is written and
    // settled; then the edge writes what it read.
    await store.settle({ accountId, requestId: 'req_l', costNano: toNano(2), proxy });
    await store.primeBalance(accountId, toNano(100));
    await store.primeKeySpend(accountId, proxy.keyId, proxy.windowId, toNano(1), 60);
    expect({ balance: await balance(accountId), spend: await spend() }).toEqual({ balance: toNano(98), spend: toNano(3) });
    // A figure primed once is not primed again, nor are the late settlements counted twice.
    await store.primeKeySpend(accountId, proxy.keyId, proxy.windowId, toNano(1), 60);
    expect(await spend()).toBe(toNano(3));
  });
});
