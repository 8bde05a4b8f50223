import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountLogsRequest, AccountSummaryRequest, LogEntry, LogsQuery, Principal, UsageSummary, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { FreeSummaryPoll } from '../policy/metering.decorators';
import { ServiceClient } from '../nats/service-client';
import { schemaRef } from '../openapi/api-docs.decorators';

/**
 * `/v1/user/me` (the account's usage summary) and `/v1/user/logs` (request logs, newest first).
 * Master keys see the account's requests; proxy and DevPass keys only their own.
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

  /** An array, as the spec shows it; the next page's cursor travels in the `x-next-cursor` header. */
  @Get('logs')
  @ApiOperation({
    summary: 'Request logs, newest first',
    description:
      "Master keys see the account's requests; proxy and DevPass keys only their own. `request_id` (a response's `x-request-id`) selects that one request.",
  })
  @ApiOkResponse({
    schema: schemaRef('LogEntries'),
    headers: { 'x-next-cursor': { description: 'Present when more entries follow: pass it as `cursor`.', schema: { type: 'string' } } },
  })
  async logs(@CurrentPrincipal() principal: Principal, @Query() query: LogsQuery, @Res({ passthrough: true }) reply: FastifyReply): Promise<LogEntry[]> {
    const request: AccountLogsRequest = {
      ...query,
      accountId: principal.accountId,
      keyId: principal.keyType === 'master' ? undefined : principal.keyId,
    };
    const page = await this.services.request(Rpc.accountLogs, request);
    if (page.nextCursor) void reply.header('x-next-cursor', page.nextCursor);
    return page.entries;
  }
}
