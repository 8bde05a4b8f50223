import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EmbeddingsBody, MediaRoutes, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.api-docs';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateInputCost } from '../billing/request-cost';
import { Metered } from '../policy/metering.decorators';

@ApiTags('Embeddings')
@Controller()
@EndpointFamily(Rpc.inferenceEmbeddings.family)
export class EmbeddingsController {
  constructor(private readonly media: MediaRelayService) {}

  @Post('embeddings')
  @HttpCode(200)
  @Metered((catalog, body) => estimateInputCost(catalog, MediaRoutes.embeddings, body))
  @ApiOperation({
    summary: 'Embed text (OpenAI format)',
    description: "`input` is a string or an array of strings; each vector carries its input's `index`. Charged the input tokens at the model's input price.",
  })
  @ApiOkResponse({ schema: schemaRef('EmbeddingList'), description: 'An embedding result.' })
  @ApiErrors(
    mediaErrors("Invalid body, an input above the model's context or 300,000 tokens in all, or `dimensions` above the model's `metadata.max_dimensions`."),
  )
  async create(@Body() body: EmbeddingsBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.embeddings, Rpc.inferenceEmbeddings, body, reply);
    if (answer) await sendMediaReply(reply, answer);
  }
}
