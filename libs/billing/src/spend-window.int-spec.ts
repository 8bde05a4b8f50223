/**
 * The spend-window rule exists twice: `windowStart` in TypeScript (the edge's and key-service's
 * windows, the Redis window ids) and `windowStartSql` in the ledger's statements. Both must put
 * every moment in the same window: checked here against the real PostgreSQL over every day of a
 * leap year, at the first and last millisecond of each UTC day and at noon, in a session whose own
 * time zone observes daylight saving (the rule is UTC's, whatever the server's zone).
 */
import { SpendWindows, type SpendWindow } from '@gateway/contracts';
import { Client } from 'pg';
import { windowStart, windowStartSql } from './spend-window';

const DAY_MS = 86_400_000;

describe('spend windows: TypeScript and SQL agree', () => {
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.INTEGRATION_DATABASE_URL });
    await db.connect();
    await db.query(`SET TIME ZONE 'Europe/Berlin'`);
  });

  afterAll(async () => {
    await db?.end();
  });

  it('over every day of 2028 (month ends, 29 February, year ends), for every window and none', async () => {
    const moments: Date[] = [];
    // 31 December 2027 to 1 January 2029: the year and both its edges.
    for (let day = Date.UTC(2027, 11, 31); day <= Date.UTC(2029, 0, 1); day += DAY_MS) {
      moments.push(new Date(day), new Date(day + DAY_MS / 2), new Date(day + DAY_MS - 1));
    }
    const windows: (SpendWindow | null)[] = [...SpendWindows, null];
    const { rows } = await db.query<{ window: SpendWindow | null; at: Date; start: Date | null }>(
      `SELECT w::text AS window, at, ${windowStartSql('w', 'at')} AS start
         FROM unnest($1::timestamptz[]) AS at CROSS JOIN unnest($2::"SpendWindow"[]) AS w`,
      [moments, windows],
    );
    expect(rows).toHaveLength(moments.length * windows.length);
    const disagreements = rows
      .map(({ window, at, start }) => ({ window, at: at.toISOString(), sql: start?.toISOString() ?? null, ts: windowStart(window, at)?.toISOString() ?? null }))
      .filter(({ sql, ts }) => sql !== ts);
    expect(disagreements).toEqual([]);
    // The checks above saw the edges they are for.
    const starts = new Set(rows.filter((row) => row.window === 'monthly').map((row) => row.start!.toISOString()));
    expect(starts).toContain('2028-03-01T00:00:00.000Z');
    expect(rows.some((row) => row.window === 'daily' && row.start!.toISOString() === '2028-02-29T00:00:00.000Z')).toBe(true);
  });
});
