import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IntegerParam } from '../validation';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateBy, ValidateNested } from 'class-validator';
import { MAX_BUDGET_WINDOWS, isTimeZone } from '../proxy-keys/budget-window';
import { USAGE_STATUSES, UsageStatus } from '../inference/usage.events';
import type { LogEntry } from './account.schema';

/** Routes `/user/me` always reports, even at zero. */
export const SUMMARY_ROUTES = ['chat.completions', 'images.generations', 'images.edits', 'videos.generations'] as const;

/** Routes whose log entries carry token counts (text models). */
export const TOKEN_ROUTES = new Set(['chat.completions', 'responses', 'messages', 'embeddings', 'moderations', 'decisions']);

/**
 * Token routes whose log entries also say how much of the input came from or went to the provider's
 * prompt cache (text generation; embeddings, moderations and decisions use no prompt cache).
 */
export const CACHE_TOKEN_ROUTES = new Set(['chat.completions', 'responses', 'messages']);

/** The gateway's request ids, as `x-request-id` carries them. */
export const REQUEST_ID_PATTERN = /^req_[0-9a-f]{32}$/;

export const LOGS_DEFAULT_LIMIT = 50;
export const LOGS_MAX_LIMIT = 500;
/** 9999-12-31T23:59:59Z: the latest `since` / `until`, inside what dates and the database can hold. */
export const LOGS_MAX_UNIX_SECONDS = 253_402_300_799;

/** `GET /v1/user/logs` query parameters. */
export class LogsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: LOGS_MAX_LIMIT, default: LOGS_DEFAULT_LIMIT, description: 'Entries per page.' })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(1)
  @Max(LOGS_MAX_LIMIT)
  limit?: number;

  /** Opaque: the `x-next-cursor` header of the previous page. */
  @ApiPropertyOptional({ description: 'The `x-next-cursor` header of the previous page.', pattern: '^[A-Za-z0-9_-]{1,200}$' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,200}$/, { message: 'cursor is not a cursor this API returned' })
  cursor?: string;

  @ApiPropertyOptional({
    description: "Only the request with this id: the `x-request-id` header of its response. An id that is not the caller's gives an empty list.",
    pattern: REQUEST_ID_PATTERN.source,
    example: 'req_0f3c9a1b2c3d4e5f60718293a4b5c6d7',
  })
  @IsOptional()
  @IsString()
  @Matches(REQUEST_ID_PATTERN, { message: 'request_id must be a gateway request id (req_ and 32 hex digits, as in x-request-id)' })
  request_id?: string;

  @ApiPropertyOptional({ description: 'Only requests to this model.', minLength: 1, maxLength: 256 })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  model?: string;

  @ApiPropertyOptional({ description: 'Only requests to this route, e.g. `chat.completions`.', minLength: 1, maxLength: 64 })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  route?: string;

  @ApiPropertyOptional({ enum: USAGE_STATUSES, description: 'Only requests that ended this way.' })
  @IsOptional()
  @IsIn(USAGE_STATUSES)
  status?: UsageStatus;

  /** Unix seconds, inclusive. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: LOGS_MAX_UNIX_SECONDS, description: 'Unix seconds, inclusive.' })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(0)
  @Max(LOGS_MAX_UNIX_SECONDS)
  since?: number;

  /** Unix seconds, exclusive. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: LOGS_MAX_UNIX_SECONDS, description: 'Unix seconds, exclusive.' })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(0)
  @Max(LOGS_MAX_UNIX_SECONDS)
  until?: number;

  @ApiPropertyOptional({
    description:
      "Master keys only: only requests made with this key (a proxy key record's `id`, a log entry's `key_id`). Proxy and DevPass keys always see only their own requests; another key's id gives an empty list.",
    minLength: 1,
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  key_id?: string;
}

/** `GET /v1/user/logs/export` query parameters: the filters of `/v1/user/logs`, without paging. */
export class LogsExportQuery {
  @ApiPropertyOptional({ description: 'As in `/v1/user/logs`.', pattern: REQUEST_ID_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(REQUEST_ID_PATTERN, { message: 'request_id must be a gateway request id (req_ and 32 hex digits, as in x-request-id)' })
  request_id?: string;

  @ApiPropertyOptional({ description: 'Only requests to this model.', minLength: 1, maxLength: 256 })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  model?: string;

  @ApiPropertyOptional({ description: 'Only requests to this route, e.g. `chat.completions`.', minLength: 1, maxLength: 64 })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  route?: string;

  @ApiPropertyOptional({ enum: USAGE_STATUSES, description: 'Only requests that ended this way.' })
  @IsOptional()
  @IsIn(USAGE_STATUSES)
  status?: UsageStatus;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: LOGS_MAX_UNIX_SECONDS, description: 'Unix seconds, inclusive.' })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(0)
  @Max(LOGS_MAX_UNIX_SECONDS)
  since?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: LOGS_MAX_UNIX_SECONDS, description: 'Unix seconds, exclusive.' })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(0)
  @Max(LOGS_MAX_UNIX_SECONDS)
  until?: number;

  @ApiPropertyOptional({ description: 'Master keys only: only requests made with this key, as in `/v1/user/logs`.', minLength: 1, maxLength: 64 })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  key_id?: string;
}

/** The most rows `GET /v1/user/logs/export` writes; a longer export ends there and says so (`x-export-truncated: true`). */
export const LOGS_EXPORT_MAX_ROWS = 100_000;

export const USAGE_BUCKETS = ['hour', 'day'] as const;
export type UsageBucket = (typeof USAGE_BUCKETS)[number];
export const USAGE_GROUPS = ['model', 'key', 'route', 'none'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];
/** `/v1/user/usage` without `from`: this long before `to`. */
export const USAGE_DEFAULT_SPAN_SECONDS = 7 * 86_400;
/** The longest `/v1/user/usage` span. */
export const USAGE_MAX_SPAN_DAYS = 400;

const IsTimeZone = () =>
  ValidateBy({
    name: 'isTimeZone',
    validator: {
      validate: (value: unknown) => isTimeZone(value),
      defaultMessage: () => 'timezone must be an IANA time zone name (e.g. UTC, Asia/Kolkata)',
    },
  });

/** `GET /v1/user/usage` query parameters. */
export class UsageQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: LOGS_MAX_UNIX_SECONDS,
    description: 'Unix seconds, inclusive; default: 7 days before `to`. Usage is kept in 15-minute buckets: a bucket counts when it starts in [`from`, `to`).',
  })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(0)
  @Max(LOGS_MAX_UNIX_SECONDS)
  from?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: LOGS_MAX_UNIX_SECONDS,
    description: `Unix seconds, exclusive; default: now. Later than \`from\`, at most ${USAGE_MAX_SPAN_DAYS} days after it.`,
  })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(1)
  @Max(LOGS_MAX_UNIX_SECONDS)
  to?: number;

  @ApiPropertyOptional({ enum: USAGE_BUCKETS, default: 'day', description: 'Points per local hour or per local day of `timezone`.' })
  @IsOptional()
  @IsIn(USAGE_BUCKETS)
  bucket?: UsageBucket;

  @ApiPropertyOptional({ enum: USAGE_GROUPS, default: 'model', description: 'One series per model, key, route, or one for everything (`none`).' })
  @IsOptional()
  @IsIn(USAGE_GROUPS)
  group_by?: UsageGroupBy;

  @ApiPropertyOptional({ default: 'UTC', description: 'The IANA time zone whose days and hours the points are, e.g. `Asia/Kolkata`.', example: 'Asia/Kolkata' })
  @IsOptional()
  @IsString()
  @IsTimeZone()
  timezone?: string;

  @ApiPropertyOptional({
    description:
      "Master keys only: only this key's usage (a proxy key record's `id`). Proxy and DevPass keys always see only their own; another key's id gives no points.",
    minLength: 1,
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  key_id?: string;
}

export class AccountUsageRequest extends UsageQuery {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** Set for proxy and DevPass keys: they see only their own usage. */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  keyId?: string;

  /** Now as the caller sees it (unix seconds), the default `to`. */
  @IsOptional()
  @IsInt()
  @Min(0)
  now?: number;
}

export class AccountLogsRequest extends LogsQuery {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** Set for proxy and DevPass keys: they see only their own requests. */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  keyId?: string;
}

export class AccountSummaryRequest {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** Today (UTC) as the caller sees it, for tests with a fixed clock; defaults to now. */
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/)
  today?: string;
}

export interface LogsPage {
  entries: LogEntry[];
  /** Present when more entries follow. */
  nextCursor?: string;
}

export class AccountBudgetRequest {
  @IsString()
  @Length(1, 64)
  accountId: string;

  @IsOptional()
  @IsString()
  @Length(1, 64)
  keyId?: string;

  /**
   * The proxy key's budget windows to read the spend of: charges at or after `from` (ms), summed
   * per `granularityMs` (0: one sum), as libs/billing's `windowSpan` gives them.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BUDGET_WINDOWS)
  @ValidateNested({ each: true })
  @Type(() => WindowSpanMessage)
  windows?: WindowSpanMessage[];

  /** What the windows count: credits (a proxy key's), or input plus output tokens (a DevPass key's). */
  @IsOptional()
  @IsIn(['credits', 'tokens'])
  unit?: 'credits' | 'tokens';
}

export class WindowSpanMessage {
  @IsInt()
  @Min(0)
  from: number;

  @IsInt()
  @Min(0)
  granularityMs: number;
}

export interface AccountBudget {
  /** Decimal string. */
  credits: string;
  /**
   * The proxy key's spend and the start (Unix ms) of the window it counts in; null start: lifetime.
   * `windows`: the spend of each requested budget window, in buckets (start ms, decimal string).
   */
  key?: { used: string; windowStartedAt: number | null; windows?: { at: number; credits: string }[][] };
}
