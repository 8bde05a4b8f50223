import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ImageEditBody, ImageGenerationBody, MediaRoutes, Rpc } from '@gateway/contracts';
import { FileUrls } from '@gateway/storage';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.api-docs';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateImageCost } from '../billing/request-cost';
import { Metered } from '../policy/metering.decorators';
import { MultipartUpload } from '../uploads/multipart-upload.decorator';
import { IMAGE_FORMATS, imageEditUpload } from './image-upload';

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
  @Metered((catalog, body) => estimateImageCost(catalog, MediaRoutes.images, body))
  @ApiOperation({
    summary: 'Generate images (OpenAI format)',
    description:
      "Without `model`: the catalog's first image model. Charged `n` × the model's `pricing.per_item`, or the upstream's usage tokens when it reports them and the model prices tokens. URLs point at `GET /v1/files/…`: signed and expiring unless `public: true`.",
  })
  @ApiOkResponse({ schema: schemaRef('ImageGenerationResult'), description: 'An image generation result.' })
  @ApiErrors(
    mediaErrors('Invalid body, or a `size`, `quality`, `style` or `n` the model does not offer (its catalog `sizes`, `qualities`, `styles`, `max_images`).'),
  )
  async generate(@Body() body: ImageGenerationBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.images, Rpc.inferenceImages, body, reply);
    if (answer) await sendMediaReply(reply, answer, this.urls);
  }

  @Post('edits')
  @HttpCode(200)
  @MultipartUpload(imageEditUpload)
  @Metered((catalog, body) => estimateImageCost(catalog, MediaRoutes.imageEdits, body))
  @ApiOperation({
    summary: 'Edit images (OpenAI format, multipart/form-data)',
    description:
      "`image` (one file) or `image[]` (several), an optional `mask` (PNG) and the generation's fields. Without `model`: the catalog's first model serving `images.edits`. Charged like a generation: `n` × the model's `pricing.per_item`, or the upstream's usage tokens when it reports them and the model prices tokens. `stream: true` is refused (400 naming `stream`).",
  })
  @ApiOkResponse({ schema: schemaRef('ImageGenerationResult'), description: 'The edited images.' })
  @ApiErrors({
    ...mediaErrors(
      `Invalid field; a missing, empty or unreadable \`image\` or \`mask\` (${IMAGE_FORMATS}; the mask PNG), named in \`param\`; \`stream: true\`; a \`size\`, \`quality\` or \`n\` the model does not offer.`,
    ),
    413: 'An image larger than `IMAGE_UPLOAD_MAX_FILE_BYTES` (50 MiB) or a body larger than `IMAGE_UPLOAD_MAX_REQUEST_BYTES` (100 MiB): refused while it is read, before any upstream is called.',
  })
  async edit(@Body() body: ImageEditBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.imageEdits, Rpc.inferenceImageEdits, body, reply);
    if (answer) await sendMediaReply(reply, answer, this.urls);
  }
}
