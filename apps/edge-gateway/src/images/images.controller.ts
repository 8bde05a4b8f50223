import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ImageGenerationBody, MediaRoutes, Rpc } from '@gateway/contracts';
import { FileUrls } from '@gateway/storage';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.api-docs';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateItemCost, imageCount } from '../billing/request-cost';
import { Metered } from '../policy/metering.decorators';

@ApiTags('Images')
@Controller('images')
@EndpointFamily(Rpc.inferenceImages.family)
export class ImagesController {
  constructor(
    private readonly media: MediaRelayService,
    private readonly urls: FileUrls,
  ) {}

  @Post('generations')
  @HttpCode(200)
  @Metered((catalog, body) => estimateItemCost(catalog, MediaRoutes.images, body, imageCount(body)))
  @ApiOperation({
    summary: 'Generate images (OpenAI format)',
    description:
      "Without `model`: the catalog's first image model. Charged `n` × the model's `pricing.per_item`. URLs point at `GET /v1/files/…`: signed and expiring unless `public: true`.",
  })
  @ApiOkResponse({ schema: schemaRef('ImageGenerationResult'), description: 'An image generation result.' })
  @ApiErrors(
    mediaErrors('Invalid body, or a `size`, `quality`, `style` or `n` the model does not offer (its catalog `sizes`, `qualities`, `styles`, `max_images`).'),
  )
  async generate(@Body() body: ImageGenerationBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.images, Rpc.inferenceImages, body, reply);
    if (answer) await sendMediaReply(reply, answer, this.urls);
  }
}
