import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountScoped, Principal, RegeneratedKey, Rpc } from '@gateway/contracts';
import { AuthCacheService } from '../auth/auth-cache.service';
import { CurrentPrincipal, KeyTypes } from '../auth/auth.decorators';
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
  ) {}

  /**
   * Issues a new primary key. The old one stops working on this edge before the answer goes out,
   * and on the others as key-service's broadcast reaches them.
   */
  @Get('regen')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Regenerate the primary key', description: 'Proxy keys are unaffected.' })
  @ApiOkResponse({ schema: schemaRef('RegeneratedKey') })
  async regenerate(@CurrentPrincipal() principal: Principal): Promise<RegeneratedKey> {
    const request: AccountScoped = { accountId: principal.accountId };
    const regenerated = await this.services.request(Rpc.masterKeyRegenerate, request);
    await this.cache.forgetAccount(principal.accountId);
    return regenerated;
  }
}
