import { Injectable } from '@nestjs/common';
import { Account, Prisma, PrismaService, SpendBucket, WindowSpan, windowSpend } from '@gateway/db';
import { DateTime } from 'luxon';
import { SeriesRow, SeriesSource, seriesSql } from './usage.sql';

export interface LogRow {
  request_id: string;
  key_id: string;
  masked_key: string;
  model: string;
  route: string;
  credits: Prisma.Decimal;
  created_at: Date;
  status: 'success' | 'cancelled' | 'error' | 'refused';
  refused_by: string | null;
  ip: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
}

export interface LogFilter {
  accountId: string;
  /** The calling key's own id (proxy and DevPass keys). */
  keyId?: string;
  /** The key asked for (`key_id`); with `keyId` too, both must hold. */
  filterKeyId?: string;
  requestId?: string;
  model?: string;
  route?: string;
  status?: string;
  since?: Date;
  until?: Date;
  /** Keyset position: entries strictly older than this (time, then request id). */
  after?: { createdAt: Date; requestId: string };
  limit: number;
}

export interface SeriesFilter {
  accountId: string;
  /** Key ids that must all match (the caller's own, the one asked for). */
  keyIds: string[];
  from: Date;
  to: Date;
  bucket: 'hour' | 'day';
  groupBy: 'model' | 'key' | 'route' | 'none';
  timezone: string;
}

/**
 * Which rollups a series reads (usage.sql.ts): day buckets, and hour buckets in a zone a whole number
 * of hours from UTC, read hours; hour buckets in a zone such as Asia/Kolkata (every local hour cuts a
 * UTC hour) read quarter hours. Only the speed depends on it: both give the same sums.
 */
function seriesSource({ bucket, timezone, from, to }: Pick<SeriesFilter, 'bucket' | 'timezone' | 'from' | 'to'>): SeriesSource {
  if (bucket === 'day') return 'hours';
  const wholeHours = (at: Date) => DateTime.fromJSDate(at, { zone: timezone }).offset % 60 === 0;
  return wholeHours(from) && wholeHours(to) ? 'hours' : 'quarters';
}

/** Read side of the ledger. */
@Injectable()
export class UsageRepository {
  private timeZones?: Promise<Set<string>>;

  constructor(private readonly prisma: PrismaService) {}

  account(accountId: string): Promise<Account | null> {
    return this.prisma.account.findUnique({ where: { id: accountId } });
  }

  async budget(
    accountId: string,
    keyId?: string,
    windows: WindowSpan[] = [],
    unit: 'credits' | 'tokens' = 'credits',
  ): Promise<{ credits: Prisma.Decimal; key?: { used: Prisma.Decimal; windowStartedAt: Date | null; windows: SpendBucket[][] } } | null> {
    const account = await this.prisma.account.findUnique({ where: { id: accountId }, select: { credits: true } });
    if (!account) return null;
    if (!keyId) return { credits: account.credits };
    const key = await this.prisma.apiKey.findFirst({
      where: { id: keyId, accountId },
      select: { usedAmount: true, windowStartedAt: true },
    });
    if (!key) return { credits: account.credits };
    return {
      credits: account.credits,
      key: { used: key.usedAmount, windowStartedAt: key.windowStartedAt, windows: await windowSpend(this.prisma, keyId, windows, unit) },
    };
  }

  async totals(accountId: string): Promise<{ inputTokens: bigint; outputTokens: bigint; byRoute: Map<string, number> }> {
    const rows = await this.prisma.$queryRaw<{ route: string; requests: bigint; input_tokens: bigint; output_tokens: bigint }[]>`
      SELECT route, SUM(requests)::bigint AS requests, SUM(input_tokens)::bigint AS input_tokens, SUM(output_tokens)::bigint AS output_tokens
      FROM daily_usage WHERE account_id = ${accountId} GROUP BY route`;
    let inputTokens = 0n;
    let outputTokens = 0n;
    const byRoute = new Map<string, number>();
    for (const row of rows) {
      inputTokens += BigInt(row.input_tokens);
      outputTokens += BigInt(row.output_tokens);
      byRoute.set(row.route, Number(row.requests));
    }
    return { inputTokens, outputTokens, byRoute };
  }

  async dailyRequests(accountId: string, from: Date, to: Date): Promise<Map<string, number>> {
    const rows = await this.prisma.$queryRaw<{ day: Date; requests: bigint }[]>`
      SELECT day, SUM(requests)::bigint AS requests FROM daily_usage
      WHERE account_id = ${accountId} AND day >= ${from}::date AND day <= ${to}::date GROUP BY day`;
    return new Map(rows.map((row) => [row.day.toISOString().slice(0, 10), Number(row.requests)]));
  }

  /**
   * Whether PostgreSQL knows a time zone name (as it compares them: ignoring case). The names are read
   * once: the IANA database of the runtime and of the database server may differ in a recent zone.
   */
  async isKnownTimeZone(zone: string): Promise<boolean> {
    this.timeZones ??= this.prisma.$queryRaw<{ name: string }[]>`SELECT name FROM pg_timezone_names`
      .then((rows) => new Set(rows.map((row) => row.name.toLowerCase())))
      .catch((error: unknown) => {
        this.timeZones = undefined;
        throw error;
      });
    return (await this.timeZones).has(zone.toLowerCase());
  }

  series(filter: SeriesFilter): Promise<SeriesRow[]> {
    return this.prisma.$queryRawUnsafe<SeriesRow[]>(
      seriesSql(filter.groupBy, filter.bucket, filter.keyIds.length, seriesSource(filter)),
      filter.accountId,
      filter.from,
      filter.to,
      filter.timezone,
      filter.bucket,
      ...filter.keyIds,
    );
  }

  /** Names and masked values of an account's keys, for series labels. */
  async keyLabels(accountId: string, keyIds: string[]): Promise<Map<string, string>> {
    if (keyIds.length === 0) return new Map();
    const keys = await this.prisma.apiKey.findMany({ where: { accountId, id: { in: keyIds } }, select: { id: true, name: true, maskedKey: true, type: true } });
    return new Map(
      keys.map((key) => [
        key.id,
        `${key.name || (key.type === 'master' ? 'master key' : key.type === 'dev' ? 'DevPass key' : 'proxy key')} (${key.maskedKey})`,
      ]),
    );
  }

  logs(filter: LogFilter): Promise<LogRow[]> {
    const conditions: Prisma.Sql[] = [Prisma.sql`account_id = ${filter.accountId}`];
    if (filter.keyId) conditions.push(Prisma.sql`key_id = ${filter.keyId}`);
    if (filter.filterKeyId) conditions.push(Prisma.sql`key_id = ${filter.filterKeyId}`);
    if (filter.requestId) conditions.push(Prisma.sql`request_id = ${filter.requestId}`);
    if (filter.model) conditions.push(Prisma.sql`model = ${filter.model}`);
    if (filter.route) conditions.push(Prisma.sql`route = ${filter.route}`);
    if (filter.status) conditions.push(Prisma.sql`status = ${filter.status}::"UsageStatus"`);
    if (filter.since) conditions.push(Prisma.sql`created_at >= ${filter.since}`);
    if (filter.until) conditions.push(Prisma.sql`created_at < ${filter.until}`);
    if (filter.after) {
      conditions.push(Prisma.sql`(created_at, request_id) < (${filter.after.createdAt}, ${filter.after.requestId})`);
    }
    return this.prisma.$queryRaw<LogRow[]>`
      SELECT request_id, key_id, masked_key, model, route, credits, created_at, status, ip, input_tokens, output_tokens, refused_by,
             cache_read_tokens, cache_write_tokens
      FROM usage_logs WHERE ${Prisma.join(conditions, ' AND ')}
      ORDER BY created_at DESC, request_id DESC
      LIMIT ${filter.limit}`;
  }
}
