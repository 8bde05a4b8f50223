import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { DEV_MODEL_SUFFIX, ModelEntry, Principal, Rpc } from '@gateway/contracts';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { ServiceClient } from '../nats/service-client';
import { schemaRef } from '../openapi/api-docs.decorators';

/**
 * `GET /v1/models`: the catalog as the caller may use it. DevPass keys see the coding-plan (`:dev`)
 * models only, other keys everything else; a proxy key with a model whitelist sees only those.
 */
@ApiTags('Models')
@Controller('models')
export class ModelsController {
  constructor(private readonly services: ServiceClient) {}

  @Get()
  @ApiOperation({
    summary: 'List the models the key may use',
    description: 'DevPass keys see only coding-plan (`:dev`) models, other keys every other model; a proxy key with a `model_whitelist` sees only those.',
  })
  @ApiOkResponse({ schema: schemaRef('ModelList') })
  async list(@CurrentPrincipal() principal: Principal): Promise<{ object: 'list'; data: ModelEntry[] }> {
    const models = await this.services.request(Rpc.inferenceModels, {});
    const whitelist = principal.proxy?.modelWhitelist ?? [];
    const data = models.filter(
      (model) => model.id.endsWith(DEV_MODEL_SUFFIX) === (principal.keyType === 'dev') && (whitelist.length === 0 || whitelist.includes(model.id)),
    );
    return { object: 'list', data };
  }
}
