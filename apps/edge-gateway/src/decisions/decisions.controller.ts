import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ModelCatalog } from '@gateway/catalog';
import { DECISION_MODEL_ID, type DecisionModel, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { DecisionModelRoute, Public } from '../auth/auth.decorators';
import { estimateDecisionCost } from '../billing/request-cost';
import { OwnPrototypeCheck } from '../policy/body-policy.decorator';
import { Metered, Unmetered } from '../policy/metering.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { DecisionsService } from './decisions.service';

@ApiTags('Decisions')
@Controller()
@EndpointFamily(Rpc.inferenceDecide.family)
export class DecisionsController {
  constructor(
    private readonly decisions: DecisionsService,
    private readonly catalog: ModelCatalog,
  ) {}

  @Get(['systemone', 'decisions'])
  @Public()
  @Unmetered('describes the model from the catalog; nothing is sent to the router')
  @ApiOperation({ summary: 'Describe the decision model', description: '`/v1/decisions` is an alias of `/v1/systemone`. No key needed.' })
  @ApiOkResponse({ schema: schemaRef('DecisionModel') })
  info(): DecisionModel {
    const model = this.catalog.get(DECISION_MODEL_ID)?.config;
    return {
      object: 'decision.model',
      model: DECISION_MODEL_ID,
      context_length: model?.tokens ?? 32_000,
      question_types: ['choice', 'score', 'noul'],
      pricing: { input: model?.pricing.input ?? 0.042, output: model?.pricing.output ?? 0, unit: 'credits per million tokens' },
    };
  }

  @Post(['systemone', 'decisions'])
  @Metered((catalog, body) => estimateDecisionCost(catalog, body))
  @OwnPrototypeCheck()
  @DecisionModelRoute()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Make a decision',
    description:
      'Facts plus questions in, machine-readable answers out (`choice`, `score`, `noul`). `/v1/decisions` is an alias of `/v1/systemone`. ' +
      'Billed per input token; failed requests are not charged.',
  })
  @ApiBody({ required: true, schema: schemaRef('DecisionRequest') })
  @ApiOkResponse({ schema: schemaRef('Decision') })
  @ApiErrors({
    400: 'Invalid body (`param` names the field), a version-pinned or unsupported model, or over 32,000 tokens.',
    402: "Insufficient credits, or the proxy key's allocation is spent.",
    429: 'Rate limit reached, or the decision model is busy: wait for `Retry-After`, then retry with backoff.',
    503: 'The decision model is temporarily unavailable: retry with backoff.',
  })
  decide(@Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.decisions.decide(request, reply);
  }
}
