import { Injectable } from '@nestjs/common';
import {
  AccountBudget,
  AccountBudgetRequest,
  AccountLogsRequest,
  AccountSummaryRequest,
  CACHE_TOKEN_ROUTES,
  LOGS_DEFAULT_LIMIT,
  LogEntry,
  LogsPage,
  SUMMARY_ROUTES,
  TOKEN_ROUTES,
  UsageSummary,
} from '@gateway/contracts';
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

  async logs(request: AccountLogsRequest): Promise<LogsPage> {
    const limit = request.limit ?? LOGS_DEFAULT_LIMIT;
    const cursor = request.cursor ? decodeCursor(request.cursor) : undefined;
    const rows = await this.usage.logs({
      accountId: request.accountId,
      keyId: request.keyId,
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
