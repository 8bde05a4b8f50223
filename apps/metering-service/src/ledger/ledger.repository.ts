import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@gateway/db';
import { spendWindowId, windowBucket, windowKey, windowStartSql } from '@gateway/billing';
import { BudgetWindowSpec, Plan, SpendWindow, UsageRecordedEvent } from '@gateway/contracts';

export interface LedgerWrite {
  state: 'recorded' | 'duplicate';
  /** What the request was charged: now, or (a duplicate) when it was first recorded. */
  credits: Prisma.Decimal;
  /** For a proxy key: the spend window the charge was counted in (its start in ms, or `life`). */
  windowId?: string;
  /** For a proxy key with budget windows: the bucket of each the charge counts in (budget-windows.ts). */
  windows?: { key: string; member: number; expiry: number }[];
  /** The account's plan, for a DevPass key's request (its plan's token windows count it). */
  plan?: Plan;
}

/** The buckets a charge made at `at` (ms) counts in, in each of a key's budget windows. */
function chargedWindows(budgets: BudgetWindowSpec[] | null, at: number): LedgerWrite['windows'] {
  if (!budgets || budgets.length === 0) return undefined;
  return budgets.map((window) => ({ key: windowKey(window), ...windowBucket(window, at) }));
}

/**
 * The start of the 15-minute usage_rollups bucket a timestamp falls in (as the migration backfilled
 * them): quarter hours, so that a day in any real time zone is a whole number of buckets.
 */
const ROLLUP_BUCKET_SQL = (at: string) => `date_bin('15 minutes', ${at}, TIMESTAMPTZ '2000-01-01 00:00:00+00')`;

/** The start of the UTC hour a timestamp falls in: the bucket of usage_rollups_hourly. */
const HOURLY_BUCKET_SQL = (at: string) => `date_bin('1 hour', ${at}, TIMESTAMPTZ '2000-01-01 00:00:00+00')`;

/** The rollup tables, finest first (the order RECORD_BATCH and VOID_CHARGES lock them in). */
const ROLLUPS = [
  { name: 'rollups', table: 'usage_rollups', bucket: ROLLUP_BUCKET_SQL },
  { name: 'hourly', table: 'usage_rollups_hourly', bucket: HOURLY_BUCKET_SQL },
] as const;

export interface AccountBalance {
  credits: Prisma.Decimal;
}

/** One usage event and its price, to be recorded. */
export interface PricedUsage {
  event: UsageRecordedEvent;
  credits: Prisma.Decimal;
}

/**
 * Records a batch of usage events in ONE statement (so one implicit transaction): the request logs
 * (idempotent by request id), and from the rows actually inserted the account debits (per account),
 * the proxy keys' spend (per key, by spend window), the daily counters of requests served (per account, UTC day and
 * route) and the usage rollups (per 15-minute bucket and per UTC hour, account, key, model and route;
 * refused requests count in none). Row locks are taken table by table in one order (usage_logs, accounts, api_keys,
 * daily_usage, usage_rollups, usage_rollups_hourly; each CTE waits on the previous one through a scalar sub-query) and,
 * within a table, in key order, so two replicas writing batches that touch the same rows wait, never deadlock.
 *
 * Proxy-key spend follows the per-event rule (a newer window restarts the count, the same window
 * adds, an older window does not count) set-based: of a key's events in the batch only those in
 * the latest window can count; they restart the count when the stored window is older (or none),
 * add to it when it is the same, and count nothing when the stored window is newer.
 */
const RECORD_BATCH = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(
    request_id text, account_id text, key_id text, key_type text, masked_key text, model text, route text, status text,
    input_tokens integer, output_tokens integer, cache_read_tokens integer, cache_write_tokens integer, credits numeric, ip text, at_ms bigint,
    refused_by text)
),
ins AS (
  INSERT INTO usage_logs (request_id, account_id, key_id, key_type, masked_key, model, route, status,
                          input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, credits, ip, created_at, refused_by)
  SELECT request_id, account_id, key_id, key_type::"KeyType", masked_key, model, route, status::"UsageStatus",
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, credits, ip, to_timestamp(at_ms / 1000.0), refused_by
  FROM input ORDER BY request_id
  ON CONFLICT (request_id) DO NOTHING
  RETURNING request_id, account_id, key_id, key_type, credits, created_at, model, route, input_tokens, output_tokens,
            cache_read_tokens, cache_write_tokens, status
),
debits AS (
  SELECT account_id, sum(credits) AS amount FROM ins WHERE credits <> 0 GROUP BY account_id
),
locked_accounts AS (
  SELECT a.id FROM accounts a WHERE a.id IN (SELECT account_id FROM debits) ORDER BY a.id FOR UPDATE
),
debited AS (
  UPDATE accounts a SET credits = a.credits - d.amount
  FROM debits d JOIN locked_accounts l ON l.id = d.account_id
  WHERE a.id = d.account_id
  RETURNING a.id
),
spends AS (
  SELECT key_id, credits, created_at FROM ins WHERE key_type = 'proxy' AND credits <> 0
),
locked_keys AS (
  SELECT k.id, k.spend_window, k.budgets FROM api_keys k
  WHERE k.id IN (SELECT key_id FROM spends) AND (SELECT count(*) FROM debited) >= 0
  ORDER BY k.id FOR UPDATE
),
key_events AS (
  SELECT s.key_id, s.credits, ${windowStartSql('k.spend_window', 's.created_at')} AS start
  FROM spends s JOIN locked_keys k ON k.id = s.key_id
),
key_latest AS (
  SELECT key_id, max(start) AS latest FROM key_events GROUP BY key_id
),
key_sums AS (
  SELECT e.key_id, l.latest, sum(e.credits) FILTER (WHERE e.start IS NOT DISTINCT FROM l.latest) AS amount
  FROM key_events e JOIN key_latest l ON l.key_id = e.key_id
  GROUP BY e.key_id, l.latest
),
spent AS (
  UPDATE api_keys k SET
    used_amount = CASE
      WHEN s.latest IS NULL THEN k.used_amount + s.amount
      WHEN k.window_started_at IS NULL OR k.window_started_at < s.latest THEN s.amount
      WHEN k.window_started_at = s.latest THEN k.used_amount + s.amount
      ELSE k.used_amount END,
    window_started_at = CASE
      WHEN s.latest IS NULL THEN NULL
      WHEN k.window_started_at IS NULL OR k.window_started_at < s.latest THEN s.latest
      ELSE k.window_started_at END
  FROM key_sums s
  WHERE k.id = s.key_id
  RETURNING k.id
),
daily AS (
  INSERT INTO daily_usage (account_id, day, route, requests, input_tokens, output_tokens)
  SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, route, count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)
  FROM ins WHERE (SELECT count(*) FROM spent) >= 0 AND status <> 'refused'
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (account_id, day, route) DO UPDATE SET
    requests = daily_usage.requests + EXCLUDED.requests,
    input_tokens = daily_usage.input_tokens + EXCLUDED.input_tokens,
    output_tokens = daily_usage.output_tokens + EXCLUDED.output_tokens
  RETURNING 1
),
${ROLLUPS.map(
  ({ name, table, bucket }, index) => `${name} AS (
  INSERT INTO ${table} (account_id, bucket, key_id, model, route, requests, input_tokens, output_tokens,
                        cache_read_tokens, cache_write_tokens, credits)
  SELECT account_id, ${bucket('created_at')}, key_id, model, route, count(*),
         coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cache_read_tokens), 0),
         coalesce(sum(cache_write_tokens), 0), sum(credits)
  FROM ins WHERE (SELECT count(*) FROM ${index === 0 ? 'daily' : ROLLUPS[index - 1].name}) >= 0 AND status <> 'refused'
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_id, bucket, key_id, model, route) DO UPDATE SET
    requests = ${table}.requests + EXCLUDED.requests,
    input_tokens = ${table}.input_tokens + EXCLUDED.input_tokens,
    output_tokens = ${table}.output_tokens + EXCLUDED.output_tokens,
    cache_read_tokens = ${table}.cache_read_tokens + EXCLUDED.cache_read_tokens,
    cache_write_tokens = ${table}.cache_write_tokens + EXCLUDED.cache_write_tokens,
    credits = ${table}.credits + EXCLUDED.credits
  RETURNING 1
)`,
).join(',\n')}
SELECT i.request_id, k.spend_window::text AS spend_window, k.budgets, (k.id IS NOT NULL) AS has_key,
       CASE WHEN i.key_type = 'dev' THEN (SELECT a.plan::text FROM accounts a WHERE a.id = i.account_id) END AS plan
FROM ins i LEFT JOIN locked_keys k ON k.id = i.key_id
WHERE (SELECT count(*) FROM hourly) >= 0`;

/**
 * Takes back the charges of requests the edge voided (it answered the client with an error and no
 * part of an answer) that were recorded charged: in ONE statement, each log entry becomes an
 * \`error\` of 0 credits, the account is credited back, and a proxy key's spend is reduced when the
 * charge counted in its current window, and the credits leave the usage rollups of the request's
 * 15-minute bucket and hour (the request still counts there, now as an error). Only entries still charged are
 * touched (\`credits <> 0\`), so voiding again changes nothing. Locks in the order RECORD_BATCH takes them.
 */
const VOID_CHARGES = `
WITH target AS (
  SELECT request_id, account_id, key_id, key_type, model, route, credits, created_at FROM usage_logs
  WHERE request_id = ANY($1::text[]) AND credits <> 0
  ORDER BY request_id FOR UPDATE
),
voided AS (
  UPDATE usage_logs u SET status = 'error', credits = 0 FROM target t WHERE u.request_id = t.request_id
  RETURNING u.request_id
),
refunds AS (
  SELECT account_id, sum(credits) AS amount FROM target WHERE (SELECT count(*) FROM voided) >= 0 GROUP BY account_id
),
locked_accounts AS (
  SELECT a.id FROM accounts a WHERE a.id IN (SELECT account_id FROM refunds) ORDER BY a.id FOR UPDATE
),
refunded AS (
  UPDATE accounts a SET credits = a.credits + r.amount
  FROM refunds r JOIN locked_accounts l ON l.id = r.account_id
  WHERE a.id = r.account_id
  RETURNING a.id
),
locked_keys AS (
  SELECT k.id, k.spend_window, k.window_started_at, k.budgets FROM api_keys k
  WHERE k.id IN (SELECT key_id FROM target WHERE key_type = 'proxy') AND (SELECT count(*) FROM refunded) >= 0
  ORDER BY k.id FOR UPDATE
),
key_refunds AS (
  SELECT t.key_id, sum(t.credits) AS amount FROM target t JOIN locked_keys k ON k.id = t.key_id
  WHERE t.key_type = 'proxy' AND k.window_started_at IS NOT DISTINCT FROM ${windowStartSql('k.spend_window', 't.created_at')}
  GROUP BY t.key_id
),
unspent AS (
  UPDATE api_keys k SET used_amount = k.used_amount - r.amount FROM key_refunds r WHERE k.id = r.key_id
  RETURNING k.id
),
${ROLLUPS.map(
  ({ name, table, bucket }, index) => `${name}_refunds AS (
  SELECT account_id, ${bucket('created_at')} AS bucket, key_id, model, route, sum(credits) AS amount
  FROM target WHERE (SELECT count(*) FROM ${index === 0 ? 'unspent' : `${ROLLUPS[index - 1].name}_unrolled`}) >= 0
  GROUP BY 1, 2, 3, 4, 5
),
${name}_locked AS (
  SELECT u.account_id, u.bucket, u.key_id, u.model, u.route FROM ${table} u
  JOIN ${name}_refunds r USING (account_id, bucket, key_id, model, route)
  ORDER BY u.account_id, u.bucket, u.key_id, u.model, u.route FOR UPDATE OF u
),
${name}_unrolled AS (
  UPDATE ${table} u SET credits = u.credits - r.amount
  FROM ${name}_refunds r JOIN ${name}_locked l USING (account_id, bucket, key_id, model, route)
  WHERE (u.account_id, u.bucket, u.key_id, u.model, u.route) = (r.account_id, r.bucket, r.key_id, r.model, r.route)
  RETURNING 1
)`,
).join(',\n')}
SELECT t.request_id, t.account_id, t.key_id, t.credits::text AS credits, t.created_at,
       k.spend_window::text AS spend_window, k.budgets, (t.key_type = 'proxy' AND k.id IS NOT NULL) AS proxy_key
FROM target t LEFT JOIN locked_keys k ON k.id = t.key_id
WHERE (SELECT count(*) FROM hourly_unrolled) >= 0`;

/** A charge taken back: what it was, and the proxy key's spend window it had counted in. */
export interface VoidedCharge {
  requestId: string;
  accountId: string;
  credits: Prisma.Decimal;
  proxy?: { keyId: string; windowId: string; windows: string[] };
}

/** The ledger: request logs, account credits, proxy-key spend and daily counters, written together. */
@Injectable()
export class LedgerRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Whether PostgreSQL answers at all (a failure while it does is not an outage). */
  isReachable(): Promise<boolean> {
    return this.prisma.isReachable();
  }

  /** Records one request and its charge (a batch of one). */
  async record(event: UsageRecordedEvent, credits: Prisma.Decimal): Promise<LedgerWrite> {
    return (await this.recordBatch([{ event, credits }]))[0];
  }

  /**
   * Records a batch of requests and their charges in one statement. The request id is the log's
   * primary key: an event recorded before (or twice in the batch) inserts nothing and charges
   * nothing, and its result says what it was charged when first recorded. Results are in the
   * batch's order.
   */
  async recordBatch(batch: PricedUsage[]): Promise<LedgerWrite[]> {
    // The first of a request id in the batch is written; a later copy is a duplicate of it.
    const first = new Map<string, PricedUsage>();
    for (const item of batch) if (!first.has(item.event.requestId)) first.set(item.event.requestId, item);
    const rows = [...first.values()].map(({ event, credits }) => ({
      request_id: event.requestId,
      account_id: event.accountId,
      key_id: event.keyId,
      key_type: event.keyType,
      masked_key: event.maskedKey,
      model: event.model,
      route: event.route,
      status: event.status,
      input_tokens: event.inputTokens,
      output_tokens: event.outputTokens,
      cache_read_tokens: event.cacheReadTokens ?? null,
      cache_write_tokens: event.cacheWriteTokens ?? null,
      credits: credits.toFixed(),
      ip: event.ip,
      at_ms: new Date(event.timestamp * 1000).getTime(),
      refused_by: event.refusedBy ?? null,
    }));
    const inserted = await this.prisma.$queryRawUnsafe<
      { request_id: string; spend_window: SpendWindow | null; budgets: BudgetWindowSpec[] | null; has_key: boolean; plan: Plan | null }[]
    >(RECORD_BATCH, JSON.stringify(rows));
    const written = new Map(inserted.map((row) => [row.request_id, row]));
    const seen = new Set<string>();
    const results: (LedgerWrite | undefined)[] = batch.map(({ event, credits }) => {
      const row = written.get(event.requestId);
      if (!row || seen.has(event.requestId)) return undefined;
      seen.add(event.requestId);
      const charged = event.keyType === 'proxy' && !credits.isZero() && row.has_key;
      return {
        state: 'recorded',
        credits,
        windowId: charged ? spendWindowId(row.spend_window, new Date(event.timestamp * 1000)) : undefined,
        windows: charged ? chargedWindows(row.budgets, event.timestamp * 1000) : undefined,
        ...(row.plan ? { plan: row.plan } : {}),
      };
    });
    // A second copy within the batch: charged nothing, settles as its first copy was charged.
    const firsts = new Map(batch.map(({ event }, index) => [event.requestId, results[index]] as const).filter(([, result]) => result));
    batch.forEach(({ event }, index) => {
      const original = results[index] === undefined ? firsts.get(event.requestId) : undefined;
      if (original) results[index] = { ...original, state: 'duplicate' };
    });
    const duplicates = batch.filter((_, index) => results[index] === undefined);
    if (duplicates.length > 0) {
      const recorded = await this.recorded(duplicates.map(({ event }) => event.requestId));
      batch.forEach(({ event }, index) => {
        if (results[index]) return;
        const row = recorded.get(event.requestId);
        const credits = new Prisma.Decimal(row?.credits ?? 0);
        const charged = event.keyType === 'proxy' && !credits.isZero() && row?.has_key;
        results[index] = {
          state: 'duplicate',
          credits,
          windowId: charged ? spendWindowId(row.spend_window, new Date(event.timestamp * 1000)) : undefined,
          windows: charged ? chargedWindows(row.budgets, event.timestamp * 1000) : undefined,
          ...(row?.plan ? { plan: row.plan } : {}),
        };
      });
    }
    return results as LedgerWrite[];
  }

  /** Takes back the charges of these requests, those still charged (see VOID_CHARGES); says which it took back. */
  async voidCharges(requestIds: string[]): Promise<VoidedCharge[]> {
    if (requestIds.length === 0) return [];
    const rows = await this.prisma.$queryRawUnsafe<
      {
        request_id: string;
        account_id: string;
        key_id: string;
        credits: string;
        created_at: Date;
        spend_window: SpendWindow | null;
        budgets: BudgetWindowSpec[] | null;
        proxy_key: boolean;
      }[]
    >(VOID_CHARGES, [...new Set(requestIds)]);
    return rows.map((row) => ({
      requestId: row.request_id,
      accountId: row.account_id,
      credits: new Prisma.Decimal(row.credits),
      ...(row.proxy_key
        ? { proxy: { keyId: row.key_id, windowId: spendWindowId(row.spend_window, row.created_at), windows: (row.budgets ?? []).map(windowKey) } }
        : {}),
    }));
  }

  /** Requests recorded before: what each was charged, and its key's spend window. */
  private async recorded(
    requestIds: string[],
  ): Promise<Map<string, { credits: string; spend_window: SpendWindow | null; budgets: BudgetWindowSpec[] | null; has_key: boolean; plan: Plan | null }>> {
    const rows = await this.prisma.$queryRaw<
      { request_id: string; credits: string; spend_window: SpendWindow | null; budgets: BudgetWindowSpec[] | null; has_key: boolean; plan: Plan | null }[]
    >`
      SELECT u.request_id, u.credits::text AS credits, k.spend_window::text AS spend_window, k.budgets, (k.id IS NOT NULL) AS has_key,
             CASE WHEN u.key_type = 'dev' THEN (SELECT a.plan::text FROM accounts a WHERE a.id = u.account_id) END AS plan
      FROM usage_logs u LEFT JOIN api_keys k ON k.id = u.key_id
      WHERE u.request_id IN (${Prisma.join([...new Set(requestIds)])})`;
    return new Map(rows.map((row) => [row.request_id, row]));
  }
}
