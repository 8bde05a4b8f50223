import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MediaRoutes, ModerationsBody, Subjects } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.openapi';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors } from '../openapi/api-docs.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateInputCost } from '../billing/request-cost';
import { Metered } from '../policy/metering.decorators';
import { ModerationResultSchema } from './moderations.openapi';

@ApiTags('Moderations')
@Controller()
export class ModerationsController {
  constructor(private readonly media: MediaRelayService) {}

  @Post('moderations')
  @HttpCode(200)
  @Metered((catalog, body) => estimateInputCost(catalog, MediaRoutes.moderations, body))
  @ApiOperation({
    summary: 'Classify text against the 11 moderation categories (OpenAI format)',
    description: "One result per input, in order. Without `model`: the catalog's first moderation model. Charged the input tokens at the model's input price.",
  })
  @ApiOkResponse({ type: ModerationResultSchema, description: 'A moderation result.' })
  @ApiErrors(mediaErrors('Invalid body.'))
  async create(@Body() body: ModerationsBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.moderations, Subjects.inferenceModerations, body);
    await sendMediaReply(reply, answer);
  }
}
