import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MediaRoutes, ModerationsBody, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.api-docs';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateInputCost } from '../billing/request-cost';
import { Metered } from '../policy/metering.decorators';

@ApiTags('Moderations')
@Controller()
@EndpointFamily(Rpc.inferenceModerations.family)
export class ModerationsController {
  constructor(private readonly media: MediaRelayService) {}

  @Post('moderations')
  @HttpCode(200)
  @Metered((catalog, body) => estimateInputCost(catalog, MediaRoutes.moderations, body))
  @ApiOperation({
    summary: 'Classify text against the 11 moderation categories (OpenAI format)',
    description: "One result per input, in order. Without `model`: the catalog's first moderation model. Charged the input tokens at the model's input price.",
  })
  @ApiOkResponse({ schema: schemaRef('ModerationResult'), description: 'A moderation result.' })
  @ApiErrors(mediaErrors('Invalid body.'))
  async create(@Body() body: ModerationsBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.moderations, Rpc.inferenceModerations, body, reply);
    if (answer) await sendMediaReply(reply, answer);
  }
}
