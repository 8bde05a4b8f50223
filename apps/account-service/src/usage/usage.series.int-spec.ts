/**
 * The usage series against real PostgreSQL: whichever rollups it reads (hours where an hour lies
 * whole in a local bucket, quarter hours where a local boundary cuts it, or quarter hours only), its
 * sums per local hour and day equal the request logs' own, in zones whole, half and three quarters of
 * an hour from UTC and across DST changes (a 25-hour day in New York, Lord Howe's half-hour shift).
 */
import { randomUUID } from 'node:crypto';
import { PrismaService } from '@gateway/db';
import { UsageRepository } from './usage.repository';
import { SeriesRow, seriesSql } from './usage.sql';

const ZONES = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/St_Johns', 'America/New_York', 'Australia/Lord_Howe'];
const MODELS = ['sim-chat', 'sim-coder', 'sim-embed'];
/** Spans with a DST change inside: Lord Howe +10:30 → +11 on 2026-10-04, New York -4 → -5 on 2026-11-01. */
const SPANS = [
  { from: '2026-10-01T03:07:00Z', to: '2026-10-07T20:52:00Z' },
  { from: '2026-10-29T00:00:00Z', to: '2026-11-04T05:30:00Z' },
];

describe('UsageRepository.series (integration)', () => {
  let prisma: PrismaService;
  let usage: UsageRepository;
  const accountId = `acct_${randomUUID().replace(/-/g, '')}`;

  beforeAll(async () => {
    prisma = new PrismaService(process.env.INTEGRATION_DATABASE_URL as string);
    await prisma.$connect();
    usage = new UsageRepository(prisma);
    await prisma.account.create({ data: { id: accountId, plan: 'pro', credits: 100 } });
    // 4,000 requests spread unevenly over both spans and a day either side, with exact decimal credits.
    await prisma.$executeRawUnsafe(
      `INSERT INTO usage_logs (request_id, account_id, key_id, key_type, masked_key, model, route, status, input_tokens, output_tokens,
                               credits, ip, created_at)
       SELECT 'req_' || md5($1 || n), $1, 'key_' || (n % 3), 'proxy', 'ek-...', ($2::text[])[1 + n % 3], 'chat.completions', 'success',
              n % 97, n % 13, (n % 1000) * 0.000000001234, '127.0.0.1',
              (CASE WHEN n % 2 = 0 THEN TIMESTAMPTZ '2026-09-30T00:00:00Z' ELSE TIMESTAMPTZ '2026-10-28T00:00:00Z' END)
                + make_interval(secs => ((n::bigint * 7919 * 7919) % (9 * 86400))::double precision)
       FROM generate_series(1, 4000) AS n`,
      accountId,
      MODELS,
    );
    // The rollups as metering writes them (its integration tests hold the ledger statement to these sums).
    await prisma.$executeRawUnsafe(
      `INSERT INTO usage_rollups (account_id, bucket, key_id, model, route, requests, input_tokens, output_tokens, credits)
       SELECT account_id, date_bin('15 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), key_id, model, route, count(*),
              sum(input_tokens), sum(output_tokens), sum(credits)
       FROM usage_logs WHERE account_id = $1 GROUP BY 1, 2, 3, 4, 5`,
      accountId,
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO usage_rollups_hourly (account_id, bucket, key_id, model, route, requests, input_tokens, output_tokens, credits)
       SELECT account_id, date_bin('1 hour', bucket, TIMESTAMPTZ '2000-01-01 00:00:00+00'), key_id, model, route, sum(requests),
              sum(input_tokens), sum(output_tokens), sum(credits)
       FROM usage_rollups WHERE account_id = $1 GROUP BY 1, 2, 3, 4, 5`,
      accountId,
    );
  });

  afterAll(async () => {
    await prisma?.$disconnect();
  });

  /** The same series computed from the request logs: requests whose quarter hour starts in [from, to). */
  const fromLogs = (from: Date, to: Date, timezone: string, bucket: 'hour' | 'day', keyId?: string) =>
    prisma.$queryRawUnsafe<SeriesRow[]>(
      `WITH q AS (
         SELECT date_bin('15 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS quarter, * FROM usage_logs
         WHERE account_id = $1 AND ($6::text IS NULL OR key_id = $6)
       ),
       sums AS (
         SELECT date_trunc($5, quarter AT TIME ZONE $4) AS local_start, model AS grp, count(*) AS requests, sum(input_tokens) AS input_tokens,
                sum(output_tokens) AS output_tokens, sum(credits) AS credits
         FROM q WHERE quarter >= $2 AND quarter < $3 GROUP BY 1, 2
       )
       SELECT extract(epoch FROM local_start AT TIME ZONE $4)::bigint::text AS start,
              to_char(local_start, CASE $5 WHEN 'day' THEN 'YYYY-MM-DD' ELSE 'YYYY-MM-DD"T"HH24:00' END) AS date,
              grp, requests::text, input_tokens::text, output_tokens::text, credits::text
       FROM sums ORDER BY local_start, grp`,
      accountId,
      from,
      to,
      timezone,
      bucket,
      keyId ?? null,
    );

  const cases = ZONES.flatMap((timezone) => SPANS.flatMap((span) => (['day', 'hour'] as const).map((bucket) => ({ timezone, bucket, ...span }))));

  it.each(cases)(
    'sums $bucket buckets in $timezone from $from to $to exactly as the request logs do, from either rollups',
    async ({ timezone, bucket, from, to }) => {
      const range = { from: new Date(from), to: new Date(to) };
      const expected = await fromLogs(range.from, range.to, timezone, bucket);
      expect(expected.length).toBeGreaterThan(bucket === 'day' ? 10 : 300);

      const served = await usage.series({ accountId, keyIds: [], ...range, bucket, groupBy: 'model', timezone });
      expect(served).toEqual(expected);
      for (const source of ['hours', 'quarters'] as const) {
        const rows = await prisma.$queryRawUnsafe<SeriesRow[]>(seriesSql('model', bucket, 0, source), accountId, range.from, range.to, timezone, bucket);
        expect(rows).toEqual(expected);
      }
    },
  );

  it('makes the hour New York repeats when its clocks go back one bucket, started at the second (standard-time) 01:00', async () => {
    const range = { from: new Date('2026-11-01T04:00:00Z'), to: new Date('2026-11-01T08:00:00Z') };
    const rows = await usage.series({ accountId, keyIds: [], ...range, bucket: 'hour', groupBy: 'none', timezone: 'America/New_York' });
    expect(rows.map((row) => [row.date, Number(row.start)])).toEqual([
      ['2026-11-01T00:00', Date.parse('2026-11-01T04:00:00Z') / 1000],
      ['2026-11-01T01:00', Date.parse('2026-11-01T06:00:00Z') / 1000],
      ['2026-11-01T02:00', Date.parse('2026-11-01T07:00:00Z') / 1000],
    ]);
    // 01:00 holds both hours (05:00 and 06:00 UTC).
    const [logged] = await prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM usage_logs WHERE account_id = $1 AND created_at >= '2026-11-01T05:00:00Z' AND created_at < '2026-11-01T07:00:00Z'`,
      accountId,
    );
    expect(Number(rows[1].requests)).toBe(Number(logged.n));
  });

  it('knows the time zones PostgreSQL knows, as it compares them (ignoring case)', async () => {
    for (const zone of ['UTC', 'Asia/Kolkata', 'asia/kathmandu', 'America/St_Johns']) expect(await usage.isKnownTimeZone(zone)).toBe(true);
    for (const zone of ['Mars/Olympus_Mons', 'Asia/Kolkata ', '']) expect(await usage.isKnownTimeZone(zone)).toBe(false);
  });

  it('counts only the filtered key, from either rollups', async () => {
    const range = { from: new Date(SPANS[1].from), to: new Date(SPANS[1].to) };
    const expected = await fromLogs(range.from, range.to, 'Asia/Kathmandu', 'day', 'key_1');
    const served = await usage.series({ accountId, keyIds: ['key_1'], ...range, bucket: 'day', groupBy: 'model', timezone: 'Asia/Kathmandu' });
    expect(served).toEqual(expected);
    const all = await fromLogs(range.from, range.to, 'Asia/Kathmandu', 'day');
    const total = (rows: SeriesRow[]) => rows.reduce((sum, row) => sum + Number(row.requests), 0);
    expect(total(served)).toBeGreaterThan(0);
    expect(total(served)).toBeLessThan(total(all));
  });
});
