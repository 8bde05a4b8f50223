import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, ValidateNested } from 'class-validator';
import { StagedFile } from './audio.messages';
import { ImageGenerationBody, MediaRequest } from './media.messages';

/** Images one edit request may send (`image[]`), as OpenAI's GPT image models take them. */
export const IMAGE_EDIT_MAX_IMAGES = 16;
export const ImageBackgrounds = ['transparent', 'opaque', 'auto'] as const;
export type ImageBackground = (typeof ImageBackgrounds)[number];
export const ImageOutputFormats = ['png', 'jpeg', 'webp'] as const;
export type ImageOutputFormat = (typeof ImageOutputFormats)[number];

/**
 * `POST /v1/images/edits` (multipart/form-data, OpenAI's shape): the generation's fields, the
 * images the edit starts from (staged by the edge, one or several) and an optional mask.
 */
@ApiSchema({ name: 'CreateImageEditRequest' })
export class ImageEditBody extends ImageGenerationBody {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', format: 'binary' },
    maxItems: IMAGE_EDIT_MAX_IMAGES,
    description: 'The image to edit (`image`), or several (`image[]`, repeated): PNG, JPEG or WebP.',
  })
  @ArrayMaxSize(IMAGE_EDIT_MAX_IMAGES, { message: `image takes at most ${IMAGE_EDIT_MAX_IMAGES} files` })
  @ArrayMinSize(1, { message: 'image is required' })
  @ValidateNested({ each: true })
  @Type(() => StagedFile)
  @IsArray({ message: 'image must be one or more files' })
  image: StagedFile[];

  @ApiPropertyOptional({ type: 'string', format: 'binary', description: 'A PNG whose transparent areas show where the first image is edited.' })
  @IsOptional()
  @ValidateNested()
  @Type(() => StagedFile)
  mask?: StagedFile;

  @ApiPropertyOptional({ enum: [...ImageBackgrounds], description: 'Passed to the upstream (GPT image models).' })
  @IsOptional()
  @IsIn(ImageBackgrounds, { message: `background must be one of: ${ImageBackgrounds.join(', ')}` })
  background?: ImageBackground;

  @ApiPropertyOptional({ enum: [...ImageOutputFormats], description: 'Passed to the upstream (GPT image models); the simulator answers PNG.' })
  @IsOptional()
  @IsIn(ImageOutputFormats, { message: `output_format must be one of: ${ImageOutputFormats.join(', ')}` })
  output_format?: ImageOutputFormat;
}

/** `inference.image-edits`: answered with `MediaReplyPart`s of an `images` reply (or a `json` error). */
export class ImageEditRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => ImageEditBody)
  body: ImageEditBody;
}
