/**
 * The budget's Lua scripts against the real Redis (the test's own database, every key under a
 * prefix of this run), through BudgetStore: admission (generation marker, revocation epoch, rate
 * limit, credits, a proxy key's allocation), settlement in exact nano-credits, release, late
 * settlements and their prime, reservations put back after a loss, and reservations that expire.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { type AdmitGate, BudgetStore, type ReserveRequest, revocationEpochKey } from './budget-store';
import { toNano } from './money';
import { windowBucket, windowKey, windowSpan } from './budget-windows';

const REDIS_URL = `redis://127.0.0.1:6379/${process.env.TEST_REDIS_DB ?? '13'}`;
const PREFIX = `${process.env.TEST_NAMESPACE ?? 'int'}:billing:${randomUUID()}:`;

describe('BudgetStore scripts (integration, real Redis)', () => {
  let redis: Redis;
  let store: BudgetStore;
  let now = Date.UTC(2030, 0, 1, 12, 0, 0);
  let counter = 0;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { keyPrefix: PREFIX, lazyConnect: false });
    store = new BudgetStore(redis, { now: () => now });
  });

  /** Redis lost the budget's state: every slot's generation marker gone. */
  const dropMarkers = async () => {
    const plain = new Redis(REDIS_URL);
    const markers = await plain.keys(`${PREFIX}budget:generation:*`);
    if (markers.length > 0) await plain.del(...markers);
    await plain.quit();
  };

  afterAll(async () => {
    const plain = new Redis(REDIS_URL);
    const stale = await plain.keys(`${PREFIX}*`);
    if (stale.length > 0) await plain.del(...stale);
    await plain.quit();
    await redis?.quit();
  });

  beforeEach(async () => {
    now += 3_600_000; // a fresh rate-limit minute per test
    await store.warm('generation-1');
  });

  const ids = () => {
    counter += 1;
    return { accountId: `acct_${counter}`, keyId: `key_${counter}`, requestId: `req_${counter}` };
  };
  const gate = (accountId: string, fields: Partial<AdmitGate> = {}): AdmitGate => ({
    accountId,
    expectedEpoch: '',
    minute: Math.floor(now / 60_000),
    requestsPerMinute: 100,
    tokensPerMinute: 10_000,
    tokens: 10,
    ...fields,
  });
  const reserve = (fields: Omit<ReserveRequest, 'ttlMs'> & { ttlMs?: number }, gateFields: Partial<AdmitGate> = {}) =>
    store.admit({ ttlMs: 60_000, ...fields }, gate(fields.accountId, gateFields));
  const figure = async (key: string) => {
    const value = await redis.get(key);
    return value === null ? null : Number(value);
  };

  describe('admission', () => {
    it('admits within the balance and refuses over it, with what is available, counting nothing when refused', async () => {
      const { accountId } = ids();
      await store.primeBalance(accountId, toNano('1.000000005'));
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.6') })).toEqual({ ok: true, requests: 1, tokens: 10 });
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano('0.400000006') })).toEqual({
        ok: false,
        reason: 'credits',
        available: 400_000_005,
        requests: 1,
        tokens: 10,
      });
      // Exactly what is left fits.
      expect(await reserve({ accountId, requestId: 'c', costNano: 400_000_005 })).toMatchObject({ ok: true, requests: 2, tokens: 20 });
      expect(await figure(`resv:{${accountId}}:total`)).toBe(toNano('1.000000005'));
    });

    it("holds a proxy key's reservation against its allocation in the window, beside the account's", async () => {
      const { accountId, keyId } = ids();
      const proxy = { keyId, windowId: 'w1', allocationNano: toNano(2) };
      await store.primeBalance(accountId, toNano(100));
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano(1), proxy })).toMatchObject({ ok: false, reason: 'cold-allocation' });
      await store.primeKeySpend(accountId, keyId, 'w1', toNano('0.5'), 60);
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano(1), proxy })).toMatchObject({ ok: true });
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano(1), proxy })).toMatchObject({
        ok: false,
        reason: 'allocation',
        available: toNano('0.5'),
      });
      expect(await figure(`resv:{${accountId}}:key:${keyId}:total`)).toBe(toNano(1));
      expect(await figure(`resv:{${accountId}}:total`)).toBe(toNano(1));
    });

    it('answers cold-balance before the balance is primed, and cold-store (before anything else) without the generation marker', async () => {
      const { accountId } = ids();
      expect(await reserve({ accountId, requestId: 'a', costNano: 1 })).toMatchObject({ ok: false, reason: 'cold-balance', requests: 0 });
      await store.primeBalance(accountId, toNano(1));
      await dropMarkers();
      expect(await store.generation()).toBeNull();
      expect(await reserve({ accountId, requestId: 'a', costNano: 1 }, { expectedEpoch: 'moved' })).toEqual({
        ok: false,
        reason: 'cold-store',
        requests: 0,
        tokens: 0,
      });
      // The first replica to finish recovery writes its generation; the others find it there.
      expect(await store.warm('generation-2')).toBe('generation-2');
      expect(await store.warm('generation-3')).toBe('generation-2');
      expect(await reserve({ accountId, requestId: 'a', costNano: 1 })).toMatchObject({ ok: true });
    });

    it("refuses as stale when the account's revocation epoch moved, before the rate limit and the budget", async () => {
      const { accountId } = ids();
      await store.primeBalance(accountId, toNano(1));
      await redis.set(revocationEpochKey(accountId), '3');
      expect(await reserve({ accountId, requestId: 'a', costNano: 1 }, { expectedEpoch: '2' })).toEqual({ ok: false, reason: 'stale', requests: 0, tokens: 0 });
      expect(await reserve({ accountId, requestId: 'a', costNano: 1 }, { expectedEpoch: '3' })).toMatchObject({ ok: true });
      // No epoch expected (a principal fresh from key-service): not checked.
      expect(await reserve({ accountId, requestId: 'b', costNano: 1 }, { expectedEpoch: '' })).toMatchObject({ ok: true });
      // An account that never had its keys changed is at epoch 0.
      const other = ids().accountId;
      await store.primeBalance(other, toNano(1));
      expect(await reserve({ accountId: other, requestId: 'a', costNano: 1 }, { expectedEpoch: '0' })).toMatchObject({ ok: true });
    });

    it('refuses over the rate limit before the budget, and a request refused for its budget counts nothing', async () => {
      const { accountId } = ids();
      await store.primeBalance(accountId, 10);
      const limits = { requestsPerMinute: 2, tokensPerMinute: 25 };
      expect(await reserve({ accountId, requestId: 'a', costNano: 4 }, limits)).toEqual({ ok: true, requests: 1, tokens: 10 });
      expect(await reserve({ accountId, requestId: 'b', costNano: 7 }, limits)).toMatchObject({
        ok: false,
        reason: 'credits',
        available: 6,
        requests: 1,
        tokens: 10,
      });
      expect(await reserve({ accountId, requestId: 'c', costNano: 1 }, { ...limits, tokens: 16 })).toMatchObject({
        ok: false,
        reason: 'tokens',
        requests: 1,
        tokens: 10,
      });
      expect(await reserve({ accountId, requestId: 'd', costNano: 1 }, limits)).toEqual({ ok: true, requests: 2, tokens: 20 });
      expect(await reserve({ accountId, requestId: 'e', costNano: 1 }, limits)).toMatchObject({ ok: false, reason: 'requests', requests: 2, tokens: 20 });
      // The next minute's windows are fresh.
      now += 60_000;
      expect(await reserve({ accountId, requestId: 'f', costNano: 1 }, limits)).toEqual({ ok: true, requests: 1, tokens: 10 });
    });
  });

  describe('the rate limit alone', () => {
    const check = (accountId: string, fields: Partial<AdmitGate> & { freePoll?: boolean } = {}) =>
      store.rateLimit({ ...gate(accountId, { requestsPerMinute: 2, tokensPerMinute: 15 }), ...fields });

    it('counts requests and tokens per minute and bucket, refusing what would pass a limit without counting it', async () => {
      const { accountId } = ids();
      expect(await check(accountId)).toEqual({ state: 'ok', requests: 1, tokens: 10 });
      expect(await check(accountId)).toEqual({ state: 'tokens', requests: 1, tokens: 10 });
      expect(await check(accountId, { tokens: 0 })).toEqual({ state: 'ok', requests: 2, tokens: 10 });
      expect(await check(accountId, { tokens: 0 })).toEqual({ state: 'requests', requests: 2, tokens: 10 });
      expect(await check(accountId, { bucket: 'summary', tokens: 0 })).toEqual({ state: 'ok', requests: 1, tokens: 0 });
    });

    it('lets the first free poll of a minute through uncounted, and checks the epoch first', async () => {
      const { accountId } = ids();
      expect(await check(accountId, { freePoll: true })).toEqual({ state: 'free', requests: 0, tokens: 0 });
      expect(await check(accountId, { freePoll: true })).toEqual({ state: 'ok', requests: 1, tokens: 10 });
      await redis.set(revocationEpochKey(accountId), '1');
      expect(await check(accountId, { expectedEpoch: '0' })).toEqual({ state: 'stale', requests: 0, tokens: 0 });
    });
  });

  describe('settlement', () => {
    it('moves the balance and the key spend by the exact nano amount once, however often the request is settled', async () => {
      const { accountId, keyId } = ids();
      const proxy = { keyId, windowId: 'life' };
      await store.primeBalance(accountId, toNano('10.5'));
      await store.primeKeySpend(accountId, keyId, 'life', toNano('0.25'), 60);
      await reserve({ accountId, requestId: 'a', costNano: toNano('3'), proxy: { ...proxy, allocationNano: toNano(5) } });
      const settlement = { accountId, requestId: 'a', costNano: toNano('1.234567891'), proxy };
      await store.settle(settlement);
      expect(await store.settleMany([settlement, settlement])).toEqual([null, null]); // redelivered
      expect(await figure(`bal:{${accountId}}`)).toBe(9_265_432_109);
      expect(await figure(`pused:{${accountId}}:${keyId}:life`)).toBe(1_484_567_891);
      expect(await figure(`resv:{${accountId}}:total`)).toBe(0);
      expect(await figure(`resv:{${accountId}}:key:${keyId}:total`)).toBe(0);
    });

    it('a released reservation frees its credits and charges nothing, even when settled later', async () => {
      const { accountId, keyId } = ids();
      await store.primeBalance(accountId, toNano(5));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      await reserve({ accountId, requestId: 'a', costNano: toNano(5), proxy: { keyId, windowId: 'life', allocationNano: toNano(5) } });
      await store.release(accountId, 'a', keyId);
      await store.settle({ accountId, requestId: 'a', costNano: toNano(1), proxy: { keyId, windowId: 'life' } });
      expect(await figure(`bal:{${accountId}}`)).toBe(toNano(5));
      expect(await figure(`pused:{${accountId}}:${keyId}:life`)).toBe(0);
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano(5), proxy: { keyId, windowId: 'life', allocationNano: toNano(5) } })).toMatchObject({
        ok: true,
      });
    });

    it('a settlement made while the figures were absent is added by their next prime, once', async () => {
      const { accountId, keyId } = ids();
      const proxy = { keyId, windowId: 'w' };
      await store.primeBalance(accountId, toNano(100));
      await store.primeKeySpend(accountId, keyId, 'w', toNano(1), 60);
      await reserve({ accountId, requestId: 'a', costNano: toNano(2), proxy: { ...proxy, allocationNano: toNano(5) } });
      await redis.del(`bal:{${accountId}}`, `pused:{${accountId}}:${keyId}:w`);
      await store.settle({ accountId, requestId: 'a', costNano: toNano('1.5'), proxy });
      expect({ balance: await figure(`bal:{${accountId}}:late`), spend: await figure(`pused:{${accountId}}:${keyId}:w:late`) }).toEqual({
        balance: -toNano('1.5'),
        spend: toNano('1.5'),
      });
      expect(await redis.pttl(`bal:{${accountId}}:late`)).toBeGreaterThan(0);
      // A prime that read the ledger before the request was written: the late settlement is added.
      await store.primeBalance(accountId, toNano(100));
      await store.primeKeySpend(accountId, keyId, 'w', toNano(1), 60);
      expect({ balance: await figure(`bal:{${accountId}}`), spend: await figure(`pused:{${accountId}}:${keyId}:w`) }).toEqual({
        balance: toNano('98.5'),
        spend: toNano('2.5'),
      });
      expect(await figure(`bal:{${accountId}}:late`)).toBeNull();
      // Primed already: neither primed again nor the late settlement counted twice.
      await store.primeBalance(accountId, toNano(100));
      expect(await figure(`bal:{${accountId}}`)).toBe(toNano('98.5'));
    });
  });

  describe('reservations over time and across a loss', () => {
    it('an unsettled reservation expires after its TTL and frees its credits', async () => {
      const { accountId } = ids();
      await store.primeBalance(accountId, toNano(1));
      await reserve({ accountId, requestId: 'a', costNano: toNano(1), ttlMs: 30_000 });
      expect(await reserve({ accountId, requestId: 'b', costNano: 1 })).toMatchObject({ ok: false, reason: 'credits', available: 0 });
      now += 30_001;
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano(1) })).toMatchObject({ ok: true });
      expect(await redis.hkeys(`resv:{${accountId}}`)).toEqual(['b']);
      // An expired reservation settled late charges nothing in Redis (the ledger is the record).
      await store.settle({ accountId, requestId: 'a', costNano: toNano(1) });
      expect(await figure(`bal:{${accountId}}`)).toBe(toNano(1));
    });

    it('puts back reservations Redis lost, once, and a request settles against them as before', async () => {
      const { accountId, keyId, requestId } = ids();
      await dropMarkers();
      const reservation = { accountId, requestId, costNano: toNano('0.75'), expiresAt: now + 60_000, keyId };
      await store.restore([reservation, { accountId, requestId: `${requestId}_b`, costNano: 5, expiresAt: now + 60_000 }]);
      await store.restore([reservation]);
      expect(await figure(`resv:{${accountId}}:total`)).toBe(toNano('0.75') + 5);
      expect(await figure(`resv:{${accountId}}:key:${keyId}:total`)).toBe(toNano('0.75'));
      expect(await redis.pttl(`resv:{${accountId}}`)).toBeGreaterThan(60_000);
      await store.warm('generation-after-loss');
      await store.primeBalance(accountId, toNano(1));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      await store.settle({ accountId, requestId, costNano: toNano('0.5'), proxy: { keyId, windowId: 'life' } });
      expect(await figure(`bal:{${accountId}}`)).toBe(toNano('0.5'));
      expect(await figure(`pused:{${accountId}}:${keyId}:life`)).toBe(toNano('0.5'));
      expect(await figure(`resv:{${accountId}}:total`)).toBe(5);
    });

    it('does not put back a reservation settled meanwhile (a failover: the settlement reached the new master first)', async () => {
      const { accountId, keyId, requestId } = ids();
      await store.primeBalance(accountId, toNano(1));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      expect(await reserve({ accountId, requestId, costNano: toNano('0.25'), proxy: { keyId, windowId: 'life', allocationNano: toNano(1) } })).toMatchObject({
        ok: true,
      });
      await store.settle({ accountId, requestId, costNano: toNano('0.25'), proxy: { keyId, windowId: 'life' } });
      await store.restore([{ accountId, requestId, costNano: toNano('0.25'), expiresAt: now + 60_000, keyId }]);
      expect(await figure(`resv:{${accountId}}:total`)).toBe(0);
      expect(await figure(`resv:{${accountId}}:key:${keyId}:total`)).toBe(0);
      expect(await figure(`bal:{${accountId}}`)).toBe(toNano('0.75'));
    });
  });
  describe("a proxy key's budget windows", () => {
    const fiveHours = { period: '5h', timezone: 'UTC' };
    const weekly = { period: 'weekly', timezone: 'Asia/Kolkata' };
    const windows = [
      { key: windowKey(fiveHours), amountNano: toNano(1) },
      { key: windowKey(weekly), amountNano: toNano(3) },
    ];
    const hour = 3_600_000;
    const settleAt = (accountId: string, keyId: string, requestId: string, costNano: number, at: number) =>
      store.settle({
        accountId,
        requestId,
        costNano,
        proxy: { keyId, windowId: 'life', windows: [fiveHours, weekly].map((window) => ({ key: windowKey(window), ...windowBucket(window, at) })) },
      });

    it('admits only while every window has room, names the window that refused, and frees a rolling window bucket by bucket', async () => {
      const { accountId, keyId } = ids();
      const start = Date.UTC(2030, 0, 7, 6, 0, 0); // Monday 11:30 in Kolkata
      const proxy = (at: number) => ({ keyId, windowId: 'life', allocationNano: toNano(100), windows, at });
      await store.primeBalance(accountId, toNano(100));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      // The windows are cold until primed from the ledger.
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.6'), proxy: proxy(start) })).toMatchObject({
        ok: false,
        reason: 'cold-allocation',
      });
      await store.primeWindows(
        accountId,
        keyId,
        windows.map((window) => ({ key: window.key, buckets: [] })),
        60_000,
      );

      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.6'), proxy: proxy(start) })).toMatchObject({
        ok: true,
        tightest: { window: 1, left: toNano(1), oldest: 0 },
      });
      await settleAt(accountId, keyId, 'a', toNano('0.6'), start);
      // 0.4 left in the 5 h window: a 0.5 reservation is refused there, naming it, with when its oldest charge leaves.
      const refused = await reserve({ accountId, requestId: 'b', costNano: toNano('0.5'), proxy: proxy(start + hour) });
      expect(refused).toMatchObject({ ok: false, reason: 'window', window: 1, available: toNano('0.4'), oldest: windowBucket(fiveHours, start).expiry });
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano('0.4'), proxy: proxy(start + 2 * hour) })).toMatchObject({ ok: true });
      await settleAt(accountId, keyId, 'b', toNano('0.4'), start + 2 * hour);
      expect(await reserve({ accountId, requestId: 'c', costNano: 1, proxy: proxy(start + 2 * hour) })).toMatchObject({
        ok: false,
        reason: 'window',
        window: 1,
        available: 0,
      });
      // Five hours (and one bucket) after the first charge only it has left the window.
      const firstGone = windowBucket(fiveHours, start).expiry;
      expect(await reserve({ accountId, requestId: 'c', costNano: toNano('0.6'), proxy: proxy(firstGone - 1) })).toMatchObject({
        reason: 'window',
        available: 0,
      });
      expect(await reserve({ accountId, requestId: 'c', costNano: toNano('0.6'), proxy: proxy(firstGone) })).toMatchObject({ ok: true });
      await settleAt(accountId, keyId, 'c', toNano('0.6'), firstGone);
      // The weekly window (3) has 1.6 spent; the 5 h window is the tighter one (0 left).
      expect(await reserve({ accountId, requestId: 'd', costNano: 1, proxy: proxy(firstGone) })).toMatchObject({ reason: 'window', window: 1 });
      const secondGone = windowBucket(fiveHours, start + 2 * hour).expiry;
      expect(await reserve({ accountId, requestId: 'd', costNano: toNano('0.4'), proxy: proxy(secondGone) })).toMatchObject({
        ok: true,
        tightest: { window: 1, left: toNano('0.4') },
      });
    });

    it('refuses on the calendar window once it is spent and has room again from midnight in its zone', async () => {
      const { accountId, keyId } = ids();
      const daily = { period: 'daily', timezone: 'Asia/Kolkata' };
      const only = [{ key: windowKey(daily), amountNano: toNano(1) }];
      const beforeMidnight = Date.UTC(2030, 0, 7, 18, 29, 0); // 23:59 in Kolkata
      const proxy = (at: number) => ({ keyId, windowId: 'life', allocationNano: toNano(100), windows: only, at });
      await store.primeBalance(accountId, toNano(100));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      // Primed from the ledger: 0.9 spent today (Kolkata).
      const spent = windowBucket(daily, beforeMidnight - hour);
      expect(windowSpan(daily, beforeMidnight).from).toBe(Date.UTC(2030, 0, 6, 18, 30, 0));
      await store.primeWindows(accountId, keyId, [{ key: only[0].key, buckets: [{ ...spent, amountNano: toNano('0.9') }] }], 60_000);
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.2'), proxy: proxy(beforeMidnight) })).toMatchObject({
        reason: 'window',
        available: toNano('0.1'),
      });
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.2'), proxy: proxy(Date.UTC(2030, 0, 7, 18, 30, 0)) })).toMatchObject({ ok: true });
    });

    it('keeps a settlement made while a window was absent for its next prime', async () => {
      const { accountId, keyId } = ids();
      const at = Date.UTC(2030, 0, 7, 6, 0, 0);
      const proxy = { keyId, windowId: 'life', allocationNano: toNano(100), windows, at };
      await store.primeBalance(accountId, toNano(100));
      await store.primeKeySpend(accountId, keyId, 'life', 0, 60);
      await store.primeWindows(
        accountId,
        keyId,
        windows.map((window) => ({ key: window.key, buckets: [] })),
        60_000,
      );
      expect(await reserve({ accountId, requestId: 'a', costNano: toNano('0.7'), proxy })).toMatchObject({ ok: true });
      await redis.del(`kw:{${accountId}}:${keyId}:${windows[0].key}`);
      await settleAt(accountId, keyId, 'a', toNano('0.7'), at);
      // The ledger was read before the charge was written: the prime adds what settled meanwhile.
      await store.primeWindows(accountId, keyId, [{ key: windows[0].key, buckets: [] }], 60_000);
      expect(await reserve({ accountId, requestId: 'b', costNano: toNano('0.4'), proxy })).toMatchObject({
        reason: 'window',
        window: 1,
        available: toNano('0.3'),
      });
    });
  });
});
