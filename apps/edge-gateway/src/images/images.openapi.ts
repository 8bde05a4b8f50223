import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

// The edge renders this body from the router's images (media/media-reply.ts); contracts has no
// type of it to implement.

@ApiSchema({ name: 'GeneratedImage', description: 'Either `url` or `b64_json`, as `response_format` asked.' })
class GeneratedImageSchema {
  @ApiPropertyOptional({
    format: 'uri',
    description:
      '`response_format: url`: `<PUBLIC_BASE_URL>/files/images/<uuid>.png`; unless the image is `public`, signed (`expires`, `signature`) and valid for `FILE_URL_TTL_SECONDS`.',
  })
  url?: string;

  @ApiPropertyOptional({ format: 'byte', description: '`response_format: b64_json`: the image data, base64.' })
  b64_json?: string;

  @ApiPropertyOptional({ description: 'The prompt the upstream actually used, when it rewrote it.' })
  revised_prompt?: string;
}

@ApiSchema({ name: 'ImageGenerationResult' })
export class ImageGenerationResultSchema {
  @ApiProperty({ type: 'integer', description: 'Unix seconds.' })
  created: number;

  @ApiProperty({ type: [GeneratedImageSchema], description: '`n` images.' })
  data: GeneratedImageSchema[];
}
