/**
 * The batched ledger write against real PostgreSQL: one statement per batch charges every request
 * exactly once (duplicates in the batch and already-recorded ones charge nothing and report the
 * original charge), counts proxy-key spend by window exactly as event-by-event writes would, and
 * two replicas writing overlapping batches at once neither deadlock nor lose a charge.
 */
import { randomUUID } from 'node:crypto';
import { Prisma, PrismaService } from '@gateway/db';
import type { SpendWindow, UsageRecordedEvent } from '@gateway/contracts';
import { LedgerRepository, PricedUsage } from './ledger.repository';

const D = (value: string | number) => new Prisma.Decimal(value);
const newId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

describe('LedgerRepository.recordBatch (integration)', () => {
  let prisma: PrismaService;
  let ledger: LedgerRepository;

  beforeAll(async () => {
    prisma = new PrismaService(process.env.INTEGRATION_DATABASE_URL as string);
    await prisma.$connect();
    ledger = new LedgerRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
  });

  const account = async (credits = '100'): Promise<string> => {
    const id = newId('acct');
    await prisma.account.create({ data: { id, plan: 'pro', credits: D(credits) } });
    return id;
  };

  const proxyKey = async (accountId: string, spendWindow: SpendWindow | null, fields: { used?: string; startedAt?: string } = {}): Promise<string> => {
    const id = newId('key');
    await prisma.apiKey.create({
      data: {
        id,
        accountId,
        type: 'proxy',
        keyHash: randomUUID(),
        maskedKey: 'ek-proxy-...test',
        allocatedAmount: D(1000),
        usedAmount: D(fields.used ?? 0),
        spendWindow,
        windowStartedAt: fields.startedAt ? new Date(fields.startedAt) : null,
      },
    });
    return id;
  };

  const usage = (accountId: string, credits: string, fields: Partial<UsageRecordedEvent> = {}): PricedUsage => ({
    credits: D(credits),
    event: {
      requestId: newId('req'),
      accountId,
      keyId: `master_${accountId}`,
      keyType: 'master',
      maskedKey: 'ek-...test',
      model: 'sim-chat',
      route: 'chat.completions',
      inputTokens: 10,
      outputTokens: 20,
      status: 'success',
      ip: '127.0.0.1',
      timestamp: Math.floor(Date.now() / 1000),
      ...fields,
    },
  });

  const onKey = (accountId: string, keyId: string, credits: string, at: string): PricedUsage =>
    usage(accountId, credits, { keyId, keyType: 'proxy', timestamp: Date.parse(at) / 1000 });

  const credits = async (accountId: string) => (await prisma.account.findUniqueOrThrow({ where: { id: accountId } })).credits.toFixed();
  const keyState = async (keyId: string) => {
    const key = await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    return { used: key.usedAmount.toFixed(), startedAt: key.windowStartedAt?.toISOString() ?? null };
  };
  const daily = (accountId: string) =>
    prisma.dailyUsage.findMany({ where: { accountId }, select: { day: true, route: true, requests: true, inputTokens: true } });
  const logs = (accountId: string) => prisma.usageLog.count({ where: { accountId } });

  /**
   * The usage rollups of an account (quarter-hour and hourly), and the same sums computed from its
   * request logs (refused requests excluded).
   */
  const rollupsAndLedger = async (accountId: string) => {
    const columns = `key_id, model, route, bucket, requests::text, input_tokens::text, output_tokens::text, cache_read_tokens::text,
      cache_write_tokens::text, credits::text`;
    const read = (table: string) =>
      prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT ${columns} FROM ${table} WHERE account_id = $1 ORDER BY key_id, model, route, bucket`,
        accountId,
      );
    const fromLogs = (grain: string) =>
      prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT ${columns} FROM (
           SELECT key_id, model, route, date_bin('${grain}', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket, count(*) AS requests,
                  coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens,
                  coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens, coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
                  sum(credits)::numeric(24, 12) AS credits
           FROM usage_logs WHERE account_id = $1 AND status <> 'refused' GROUP BY 1, 2, 3, 4) s
         ORDER BY key_id, model, route, bucket`,
        accountId,
      );
    return {
      rollups: await read('usage_rollups'),
      ledger: await fromLogs('15 minutes'),
      hourly: await read('usage_rollups_hourly'),
      hourlyLedger: await fromLogs('1 hour'),
    };
  };

  it('charges a batch once: a request repeated in the batch or recorded before charges nothing and reports its first charge', async () => {
    const accountId = await account('100');
    const earlier = usage(accountId, '1.5');
    expect(await ledger.recordBatch([earlier])).toEqual([{ state: 'recorded', credits: D('1.5'), windowId: undefined }]);

    const a = usage(accountId, '0.000000000001');
    const b = usage(accountId, '2.25', { route: 'messages', inputTokens: 5 });
    // The earlier request delivered again, priced differently this time: its first charge stands.
    const again = { ...earlier, credits: D('7') };
    const results = await ledger.recordBatch([a, again, b, a, b]);
    expect(results.map((result) => [result.state, result.credits.toFixed()])).toEqual([
      ['recorded', '0.000000000001'],
      ['duplicate', '1.5'],
      ['recorded', '2.25'],
      ['duplicate', '0.000000000001'],
      ['duplicate', '2.25'],
    ]);
    expect(await credits(accountId)).toBe(D(100).minus('1.5').minus('0.000000000001').minus('2.25').toFixed());
    expect(await logs(accountId)).toBe(3);
    const counters = await daily(accountId);
    expect(counters.map(({ route, requests, inputTokens }) => ({ route, requests, inputTokens })).sort((x, y) => x.route.localeCompare(y.route))).toEqual([
      { route: 'chat.completions', requests: 2, inputTokens: 20n },
      { route: 'messages', requests: 1, inputTokens: 5n },
    ]);
    expect(counters[0].day.toISOString().slice(0, 10)).toBe(new Date().toISOString().slice(0, 10));

    // The whole batch delivered again: nothing more is charged.
    expect((await ledger.recordBatch([a, b])).map((result) => result.state)).toEqual(['duplicate', 'duplicate']);
    expect(await credits(accountId)).toBe(D(100).minus('3.750000000001').toFixed());
  });

  it('counts proxy-key spend by window in one batch: the newest window restarts the count, an older one counts nothing', async () => {
    const accountId = await account('100');
    const week1 = '2030-01-07T00:00:00.000Z';
    const week2 = '2030-01-14T00:00:00.000Z';
    // Stored: 1 credit in week 1. The batch: week 2, a late week-1 event, week 2 again.
    const key = await proxyKey(accountId, 'weekly', { used: '1', startedAt: week1 });
    const results = await ledger.recordBatch([
      onKey(accountId, key, '2', '2030-01-15T10:00:00Z'),
      onKey(accountId, key, '4', '2030-01-12T23:00:00Z'),
      onKey(accountId, key, '3', '2030-01-16T10:00:00Z'),
    ]);
    expect(results.map((result) => result.windowId)).toEqual([String(Date.parse(week2)), String(Date.parse(week1)), String(Date.parse(week2))]);
    expect(await keyState(key)).toEqual({ used: '5', startedAt: week2 });
    // Every charge reaches the account, whichever window it counted in.
    expect(await credits(accountId)).toBe('91');

    // A key already in week 2 adds week-2 spend and ignores week 1.
    await ledger.recordBatch([onKey(accountId, key, '4', '2030-01-08T10:00:00Z'), onKey(accountId, key, '0.5', '2030-01-14T00:00:00Z')]);
    expect(await keyState(key)).toEqual({ used: '5.5', startedAt: week2 });

    // A lifetime allocation adds everything and has no window.
    const life = await proxyKey(accountId, null, { used: '1' });
    const lifeResults = await ledger.recordBatch([onKey(accountId, life, '2', '2030-01-15T10:00:00Z'), onKey(accountId, life, '3', '2030-02-15T10:00:00Z')]);
    expect(lifeResults.map((result) => result.windowId)).toEqual(['life', 'life']);
    expect(await keyState(life)).toEqual({ used: '6', startedAt: null });
  });

  it('leaves a key exactly as event-by-event writes would, in any order', async () => {
    const times = [
      '2030-03-02T10:00:00Z',
      '2030-03-01T23:59:59Z',
      '2030-03-03T00:00:00Z',
      '2030-03-02T12:00:00Z',
      '2030-02-28T08:00:00Z',
      '2030-03-03T05:00:00Z',
    ];
    for (const [window, stored] of [
      ['daily', undefined],
      ['daily', '2030-03-02T00:00:00.000Z'],
      ['daily', '2030-03-05T00:00:00.000Z'],
      ['monthly', '2030-02-01T00:00:00.000Z'],
      ['weekly', undefined],
    ] as [SpendWindow, string | undefined][]) {
      for (let round = 0; round < 3; round++) {
        const order = [...times].sort(() => Math.random() - 0.5);
        const accountId = await account('100');
        const one = await proxyKey(accountId, window, { used: stored ? '10' : '0', startedAt: stored });
        const batched = await proxyKey(accountId, window, { used: stored ? '10' : '0', startedAt: stored });
        for (const [i, at] of order.entries()) await ledger.recordBatch([onKey(accountId, one, String(i + 1), at)]);
        await ledger.recordBatch(order.map((at, i) => onKey(accountId, batched, String(i + 1), at)));
        expect({ window, stored, order, state: await keyState(batched) }).toEqual({ window, stored, order, state: await keyState(one) });
      }
    }
  });

  it('rejects a batch holding an event PostgreSQL cannot store, writing none of it', async () => {
    const accountId = await account('10');
    const good = usage(accountId, '1');
    await expect(ledger.recordBatch([good, usage(accountId, '1', { inputTokens: 2 ** 31 })])).rejects.toThrow();
    expect(await logs(accountId)).toBe(0);
    expect(await credits(accountId)).toBe('10');
  });

  it('keeps the usage rollups equal to the ledger: duplicates counted once, refused requests not at all, in 15-minute and hourly buckets', async () => {
    const accountId = await account('100');
    const key = await proxyKey(accountId, null);
    const at = (iso: string) => Date.parse(iso) / 1000;
    const a = usage(accountId, '0.000000000001', { timestamp: at('2030-03-01T10:14:59Z'), cacheReadTokens: 3 });
    const b = usage(accountId, '2.25', { timestamp: at('2030-03-01T10:00:00Z'), route: 'messages', cacheWriteTokens: 4 });
    const c = usage(accountId, '1.5', { timestamp: at('2030-03-01T10:15:00Z') });
    const onProxy = onKey(accountId, key, '0.333333333333', '2030-03-01T10:05:00Z');
    const refused = usage(accountId, '0', { timestamp: at('2030-03-01T10:01:00Z'), status: 'refused', refusedBy: '5h@UTC' });
    await ledger.recordBatch([a, b, a, c, onProxy, refused, onProxy]);
    // Delivered again, some priced differently: nothing more is counted.
    await ledger.recordBatch([{ ...a, credits: D(9) }, c, { ...onProxy, credits: D(5) }]);

    const { rollups, ledger: sums, hourly, hourlyLedger } = await rollupsAndLedger(accountId);
    expect(rollups).toEqual(sums);
    expect(hourly).toEqual(hourlyLedger);
    const master = rollups.filter((row) => row.key_id === `master_${accountId}` && row.route === 'chat.completions');
    expect(master.map((row) => [(row.bucket as Date).toISOString(), row.requests, row.credits, row.cache_read_tokens])).toEqual([
      ['2030-03-01T10:00:00.000Z', '1', '0.000000000001', '3'],
      ['2030-03-01T10:15:00.000Z', '1', '1.500000000000', '0'],
    ]);
    expect(rollups.find((row) => row.key_id === key)).toMatchObject({ requests: '1', credits: '0.333333333333' });
    expect(rollups.reduce((sum, row) => sum + Number(row.requests), 0)).toBe(4);
    // The hour adds up its quarters: both of the master key's chat requests in one row.
    const masterHour = hourly.filter((row) => row.key_id === `master_${accountId}` && row.route === 'chat.completions');
    expect(masterHour.map((row) => [(row.bucket as Date).toISOString(), row.requests, row.credits])).toEqual([
      ['2030-03-01T10:00:00.000Z', '2', '1.500000000001'],
    ]);
  });

  it('takes a voided charge out of its rollup bucket: the request still counts, as an error, with no credits', async () => {
    const accountId = await account('100');
    const at = Date.parse('2030-03-02T23:59:00Z') / 1000;
    const kept = usage(accountId, '1.25', { timestamp: at });
    const voided = usage(accountId, '0.75', { timestamp: at });
    await ledger.recordBatch([kept, voided]);
    expect(await ledger.voidCharges([voided.event.requestId])).toHaveLength(1);
    // Voiding again changes nothing.
    expect(await ledger.voidCharges([voided.event.requestId])).toHaveLength(0);

    const { rollups, ledger: sums, hourly, hourlyLedger } = await rollupsAndLedger(accountId);
    expect(rollups).toEqual(sums);
    expect(hourly).toEqual(hourlyLedger);
    expect(rollups).toEqual([expect.objectContaining({ requests: '2', credits: '1.250000000000', input_tokens: '20' })]);
    expect(await credits(accountId)).toBe('98.75');
  });

  it('two replicas writing overlapping batches at once: no deadlock, every request charged exactly once', async () => {
    const second = new PrismaService(process.env.INTEGRATION_DATABASE_URL as string);
    await second.$connect();
    try {
      const replicas = [ledger, new LedgerRepository(second)];
      const accounts = await Promise.all(Array.from({ length: 6 }, () => account('1000')));
      const keys = await Promise.all(accounts.slice(0, 3).map((accountId) => proxyKey(accountId, 'daily')));
      const events: PricedUsage[] = Array.from({ length: 1200 }, (_, i) => {
        const accountId = accounts[i % accounts.length];
        const charge = `0.${String(i + 1).padStart(6, '0')}123`;
        const keyIndex = accounts.indexOf(accountId);
        return keyIndex < 3 ? onKey(accountId, keys[keyIndex], charge, new Date().toISOString()) : usage(accountId, charge);
      });
      // Each replica gets every event in its own shuffled order (as redeliveries would), in batches of 100, four in flight.
      await Promise.all(
        replicas.map(async (replica) => {
          const shuffled = [...events].sort(() => Math.random() - 0.5);
          const batches = Array.from({ length: shuffled.length / 100 }, (_, i) => shuffled.slice(i * 100, i * 100 + 100));
          const lanes = Array.from({ length: 4 }, async (_, lane) => {
            for (let i = lane; i < batches.length; i += 4) await replica.recordBatch(batches[i]);
          });
          await Promise.all(lanes);
        }),
      );
      for (const [index, accountId] of accounts.entries()) {
        const mine = events.filter(({ event }) => event.accountId === accountId);
        const total = mine.reduce((sum, { credits }) => sum.plus(credits), D(0));
        expect(await logs(accountId)).toBe(mine.length);
        expect(await credits(accountId)).toBe(D(1000).minus(total).toFixed());
        expect((await daily(accountId)).map(({ requests }) => requests)).toEqual([mine.length]);
        if (index < 3) expect((await keyState(keys[index])).used).toBe(total.toFixed());
        const { rollups, ledger: sums, hourly, hourlyLedger } = await rollupsAndLedger(accountId);
        expect(rollups).toEqual(sums);
        expect(hourly).toEqual(hourlyLedger);
      }
    } finally {
      await second.$disconnect();
    }
  });
});
