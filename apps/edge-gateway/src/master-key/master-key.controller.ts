import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountScoped, RegeneratedKey, Rpc } from '@gateway/contracts';
import { AuthCacheService } from '../auth/auth-cache.service';
import { AuthenticatedRequest, KeyTypes } from '../auth/auth.decorators';
import { bearerKey } from '../auth/api-key.guard';
import { ConsoleSessions } from '../console-session/console-sessions';
import { sessionToken } from '../console-session/session-cookie';
import { ServiceClient } from '../nats/service-client';
import { ErrorFormat } from '../policy/error-format.decorator';
import { schemaRef } from '../openapi/api-docs.decorators';

@ApiTags('Keys')
@Controller('auth/key')
@ErrorFormat('detail')
export class MasterKeyController {
  constructor(
    private readonly services: ServiceClient,
    private readonly cache: AuthCacheService,
    private readonly sessions: ConsoleSessions,
  ) {}

  /**
   * Issues a new primary key. The old one stops working on this edge before the answer goes out,
   * and on the others as key-service's broadcast reaches them.
   */
  @Get('regen')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Regenerate the primary key', description: 'Proxy keys are unaffected.' })
  @ApiOkResponse({ schema: schemaRef('RegeneratedKey') })
  async regenerate(@Req() request: AuthenticatedRequest): Promise<RegeneratedKey> {
    const { principal, consoleSession } = request;
    const command: AccountScoped = { accountId: principal.accountId };
    const regenerated = await this.services.request(Rpc.masterKeyRegenerate, command);
    await this.cache.forgetAccount(principal.accountId);
    // The console session that asked follows the new key; every other session of the old key ends.
    const token = sessionToken(request);
    if (consoleSession && token) await this.sessions.rekey(token, regenerated.key);
    await this.sessions.endKey(consoleSession?.keyHash ?? AuthCacheService.hash(bearerKey(request, false) ?? ''));
    return regenerated;
  }
}
