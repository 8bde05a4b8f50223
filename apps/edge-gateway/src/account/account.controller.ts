import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountLogsRequest,
  AccountSummaryRequest,
  AccountUsageRequest,
  LOGS_EXPORT_MAX_ROWS,
  LOGS_MAX_LIMIT,
  LogEntry,
  LogsExportQuery,
  LogsQuery,
  Principal,
  UsageQuery,
  UsageSeries,
  UsageSummary,
  Rpc,
} from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { FreeSummaryPoll } from '../policy/metering.decorators';
import { ServiceClient } from '../nats/service-client';
import { schemaRef } from '../openapi/api-docs.decorators';
import { LOG_CSV_COLUMNS, logsCsvHeader, logsCsvRow } from './logs-csv';

/** Proxy and DevPass keys see only their own requests and usage; a master key the account's. */
const ownKeyOnly = (principal: Principal): string | undefined => (principal.keyType === 'master' ? undefined : principal.keyId);

/**
 * `/v1/user/me` (the account's usage summary), `/v1/user/usage` (usage series in a time zone) and
 * `/v1/user/logs` (request logs, newest first, and their CSV export). Master keys see the account's
 * requests; proxy and DevPass keys only their own.
 */
@ApiTags('Account')
@Controller('user')
export class AccountController {
  constructor(private readonly services: ServiceClient) {}

  @Get('me')
  @FreeSummaryPoll()
  @ApiOperation({ summary: 'Usage summary', description: 'May be polled once a minute without counting against the rate limit.' })
  @ApiOkResponse({ schema: schemaRef('UsageSummary') })
  me(@CurrentPrincipal() principal: Principal): Promise<UsageSummary> {
    const request: AccountSummaryRequest = { accountId: principal.accountId };
    return this.services.request(Rpc.accountSummary, request);
  }

  @Get('usage')
  @ApiOperation({
    summary: 'Usage series in a time zone',
    description:
      "Requests, tokens and credits per local hour or day of `timezone`, by model, key or route, summed from 15-minute rollups written with the ledger (refused requests are not counted). Master keys see the account's usage (`key_id` narrows it to one key); proxy and DevPass keys only their own.",
  })
  @ApiOkResponse({ schema: schemaRef('UsageSeries') })
  usage(@CurrentPrincipal() principal: Principal, @Query() query: UsageQuery): Promise<UsageSeries> {
    const request: AccountUsageRequest = { ...query, accountId: principal.accountId, keyId: ownKeyOnly(principal) };
    return this.services.request(Rpc.accountUsage, request);
  }

  /** An array, as the spec shows it; the next page's cursor travels in the `x-next-cursor` header. */
  @Get('logs')
  @ApiOperation({
    summary: 'Request logs, newest first',
    description:
      "Master keys see the account's requests (`key_id` narrows them to one key); proxy and DevPass keys only their own. `request_id` (a response's `x-request-id`) selects that one request.",
  })
  @ApiOkResponse({
    schema: schemaRef('LogEntries'),
    headers: { 'x-next-cursor': { description: 'Present when more entries follow: pass it as `cursor`.', schema: { type: 'string' } } },
  })
  async logs(@CurrentPrincipal() principal: Principal, @Query() query: LogsQuery, @Res({ passthrough: true }) reply: FastifyReply): Promise<LogEntry[]> {
    const request: AccountLogsRequest = { ...query, accountId: principal.accountId, keyId: ownKeyOnly(principal) };
    const page = await this.services.request(Rpc.accountLogs, request);
    if (page.nextCursor) void reply.header('x-next-cursor', page.nextCursor);
    return page.entries;
  }

  /** The same entries as `/user/logs` with the same filters, newest first, as one CSV file (paged internally). */
  @Get('logs/export')
  @ApiOperation({
    summary: 'Request logs as CSV',
    description: `The entries \`/v1/user/logs\` answers for the same filters, newest first, as CSV: a header row (${LOG_CSV_COLUMNS.map((column) => `\`${column}\``).join(', ')}), then one row per entry. At most ${LOGS_EXPORT_MAX_ROWS.toLocaleString('en-US')} rows; a longer export stops there and says so in \`x-export-truncated: true\`.`,
  })
  @ApiProduces('text/csv')
  @ApiResponse({
    status: 200,
    description: 'A CSV file (`content-disposition: attachment; filename="logs.csv"`).',
    content: { 'text/csv': { schema: { type: 'string' } } },
    headers: {
      'x-export-truncated': {
        description: `\`true\` when more than ${LOGS_EXPORT_MAX_ROWS.toLocaleString('en-US')} entries matched and the rest were left out.`,
        schema: { type: 'string', enum: ['true'] },
      },
    },
  })
  async exportLogs(
    @CurrentPrincipal() principal: Principal,
    @Query() query: LogsExportQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const lines = [logsCsvHeader()];
    let cursor: string | undefined;
    let truncated = false;
    for (;;) {
      const remaining = LOGS_EXPORT_MAX_ROWS - (lines.length - 1);
      const request: AccountLogsRequest = {
        ...query,
        accountId: principal.accountId,
        keyId: ownKeyOnly(principal),
        limit: Math.min(LOGS_MAX_LIMIT, remaining),
        cursor,
      };
      const page = await this.services.request(Rpc.accountLogs, request);
      for (const entry of page.entries) lines.push(logsCsvRow(entry));
      cursor = page.nextCursor;
      if (!cursor) break;
      if (lines.length - 1 >= LOGS_EXPORT_MAX_ROWS) {
        truncated = true;
        break;
      }
    }
    void reply.header('content-type', 'text/csv; charset=utf-8');
    void reply.header('content-disposition', 'attachment; filename="logs.csv"');
    if (truncated) void reply.header('x-export-truncated', 'true');
    return lines.join('');
  }
}
