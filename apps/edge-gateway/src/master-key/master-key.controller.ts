import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountScoped, Principal, Subjects } from '@gateway/contracts';
import { CurrentPrincipal, KeyTypes } from '../auth/auth.decorators';
import { ServiceClient } from '../nats/service-client';
import { RegeneratedKeySchema } from './master-key.openapi';

@ApiTags('Keys')
@Controller('auth/key')
export class MasterKeyController {
  constructor(private readonly services: ServiceClient) {}

  /** Issues a new primary key; key-service invalidates the old one on every edge before answering. */
  @Get('regen')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Regenerate the primary key', description: 'Proxy keys are unaffected.' })
  @ApiOkResponse({ type: RegeneratedKeySchema })
  regenerate(@CurrentPrincipal() principal: Principal): Promise<RegeneratedKeySchema> {
    const request: AccountScoped = { accountId: principal.accountId };
    return this.services.request(Subjects.masterKeyRegenerate, request);
  }
}
