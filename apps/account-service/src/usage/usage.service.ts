import { Injectable } from '@nestjs/common';
import {
  AccountBudget,
  AccountBudgetRequest,
  AccountLogsRequest,
  AccountSummaryRequest,
  AccountUsageRequest,
  CACHE_TOKEN_ROUTES,
  LOGS_DEFAULT_LIMIT,
  LogEntry,
  LogsPage,
  SUMMARY_ROUTES,
  TOKEN_ROUTES,
  USAGE_DEFAULT_SPAN_SECONDS,
  USAGE_MAX_SPAN_DAYS,
  UsageSeries,
  UsageSummary,
} from '@gateway/contracts';
import { Prisma } from '@gateway/db';
import { LogRow, UsageRepository } from './usage.repository';
import { DomainError, ErrorCode } from '@gateway/errors';

const HISTORY_DAYS = 30;
const DAY_MS = 86_400_000;

interface Cursor {
  t: number;
  id: string;
}

const encodeCursor = (row: LogRow): string =>
  Buffer.from(JSON.stringify({ t: row.created_at.getTime(), id: row.request_id } satisfies Cursor)).toString('base64url');

function decodeCursor(cursor: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    if (Number.isSafeInteger(parsed.t) && typeof parsed.id === 'string') return parsed;
  } catch {
    // fall through
  }
  throw new DomainError(ErrorCode.InvalidRequest, 'cursor is not a cursor this API returned', 'cursor');
}

function toEntry(row: LogRow): LogEntry {
  const entry: LogEntry = {
    request_id: row.request_id,
    key: row.masked_key,
    key_id: row.key_id,
    model: row.model,
    route: row.route,
    credits: row.credits.toNumber(),
    timestamp: Math.floor(row.created_at.getTime() / 1000),
    status: row.status,
    ip: row.ip,
  };
  if (TOKEN_ROUTES.has(row.route)) {
    entry.input_tokens = row.input_tokens ?? 0;
    entry.output_tokens = row.output_tokens ?? 0;
  }
  if (CACHE_TOKEN_ROUTES.has(row.route)) {
    entry.cache_read_input_tokens = row.cache_read_tokens ?? 0;
    entry.cache_creation_input_tokens = row.cache_write_tokens ?? 0;
  }
  if (row.refused_by) {
    // `<period>@<timezone>`: the zone is an IANA name, which never holds an '@'.
    const at = row.refused_by.lastIndexOf('@');
    entry.refused_by = { period: row.refused_by.slice(0, at), timezone: row.refused_by.slice(at + 1) };
  }
  return entry;
}

/** `/user/me` and `/user/logs`, read from the ledger metering-service writes. */
@Injectable()
export class UsageService {
  constructor(private readonly usage: UsageRepository) {}

  async summary(request: AccountSummaryRequest): Promise<UsageSummary> {
    const account = await this.usage.account(request.accountId);
    if (!account) throw new DomainError(ErrorCode.NotFound, 'Account not found');
    const today = request.today ? new Date(`${request.today}T00:00:00Z`) : new Date(new Date().toISOString().slice(0, 10));
    const first = new Date(today.getTime() - (HISTORY_DAYS - 1) * DAY_MS);
    const [totals, daily] = await Promise.all([this.usage.totals(account.id), this.usage.dailyRequests(account.id, first, today)]);
    const history = Array.from({ length: HISTORY_DAYS }, (_, i) => {
      const date = new Date(first.getTime() + i * DAY_MS).toISOString().slice(0, 10);
      return { date, requests: daily.get(date) ?? 0 };
    });
    const endpoints: Record<string, number> = Object.fromEntries(SUMMARY_ROUTES.map((route) => [route, 0]));
    for (const [route, requests] of totals.byRoute) endpoints[route] = requests;
    return {
      subscription: account.plan,
      credits: account.credits.toNumber(),
      usage: { input_tokens: Number(totals.inputTokens), output_tokens: Number(totals.outputTokens) },
      history,
      endpoints,
    };
  }

  async budget(request: AccountBudgetRequest): Promise<AccountBudget> {
    const budget = await this.usage.budget(request.accountId, request.keyId, request.windows, request.unit);
    if (!budget) throw new DomainError(ErrorCode.NotFound, 'Account not found');
    if (!budget.key) return { credits: budget.credits.toString() };
    const { used, windowStartedAt, windows } = budget.key;
    return {
      credits: budget.credits.toString(),
      key: {
        used: used.toString(),
        windowStartedAt: windowStartedAt?.getTime() ?? null,
        ...(request.windows ? { windows: windows.map((buckets) => buckets.map(({ at, credits }) => ({ at, credits: credits.toFixed() }))) } : {}),
      },
    };
  }

  /** `/user/usage`: the series of the rollups in the caller's time zone, defaults filled in. */
  async series(request: AccountUsageRequest): Promise<UsageSeries> {
    const now = request.now ?? Math.floor(Date.now() / 1000);
    const to = request.to ?? now;
    const from = request.from ?? Math.max(0, to - USAGE_DEFAULT_SPAN_SECONDS);
    // The field at fault is the one the caller sent (`to` defaults to now, `from` to a week before `to`).
    const field = request.to === undefined ? 'from' : 'to';
    if (to <= from)
      throw new DomainError(ErrorCode.InvalidRequest, request.to === undefined ? 'from must be earlier than now' : 'to must be later than from', field);
    if (to - from > USAGE_MAX_SPAN_DAYS * 86_400) {
      throw new DomainError(ErrorCode.InvalidRequest, `from and to may be at most ${USAGE_MAX_SPAN_DAYS} days apart`, field);
    }
    const bucket = request.bucket ?? 'day';
    const groupBy = request.group_by ?? 'model';
    const timezone = request.timezone ?? 'UTC';
    if (!(await this.usage.isKnownTimeZone(timezone))) {
      throw new DomainError(ErrorCode.InvalidRequest, `timezone '${timezone}' is not a time zone the ledger's database knows`, 'timezone');
    }
    const keyIds = [request.keyId, request.key_id].filter((id): id is string => id !== undefined);
    const rows = await this.usage.series({
      accountId: request.accountId,
      keyIds: [...new Set(keyIds)],
      from: new Date(from * 1000),
      to: new Date(to * 1000),
      bucket,
      groupBy,
      timezone,
    });
    const groupIds = [...new Set(rows.map((row) => row.grp))].sort();
    const labels = groupBy === 'key' ? await this.usage.keyLabels(request.accountId, groupIds) : new Map<string, string>();
    let credits = new Prisma.Decimal(0);
    const totals = { requests: 0, input_tokens: 0, output_tokens: 0 };
    const points = rows.map((row) => {
      const point = {
        start: Number(row.start),
        date: row.date,
        group: row.grp,
        requests: Number(row.requests),
        input_tokens: Number(row.input_tokens),
        output_tokens: Number(row.output_tokens),
        credits: new Prisma.Decimal(row.credits).toFixed(),
      };
      totals.requests += point.requests;
      totals.input_tokens += point.input_tokens;
      totals.output_tokens += point.output_tokens;
      credits = credits.plus(row.credits);
      return point;
    });
    return {
      object: 'usage.series',
      timezone,
      bucket,
      group_by: groupBy,
      from,
      to,
      groups: groupIds.map((group) => ({ group, label: labels.get(group) ?? group })),
      points,
      totals: { ...totals, credits: credits.toFixed() },
    };
  }

  async logs(request: AccountLogsRequest): Promise<LogsPage> {
    const limit = request.limit ?? LOGS_DEFAULT_LIMIT;
    const cursor = request.cursor ? decodeCursor(request.cursor) : undefined;
    const rows = await this.usage.logs({
      accountId: request.accountId,
      keyId: request.keyId,
      filterKeyId: request.key_id,
      requestId: request.request_id,
      model: request.model,
      route: request.route,
      status: request.status,
      since: request.since === undefined ? undefined : new Date(request.since * 1000),
      until: request.until === undefined ? undefined : new Date(request.until * 1000),
      after: cursor ? { createdAt: new Date(cursor.t), requestId: cursor.id } : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      entries: page.map(toEntry),
      ...(rows.length > limit ? { nextCursor: encodeCursor(page[page.length - 1]) } : {}),
    };
  }
}
