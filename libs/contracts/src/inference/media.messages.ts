import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidateNested,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';
import { CallerContext, type HeartbeatFrame } from './text-generation.messages';

/** Usage route names of the media endpoints, as request logs and `/user/me` spell them. */
export const MediaRoutes = {
  embeddings: 'embeddings',
  moderations: 'moderations',
  images: 'images.generations',
  imageEdits: 'images.edits',
  transcriptions: 'audio.transcriptions',
  translations: 'audio.translations',
} as const;
export type MediaRoute = (typeof MediaRoutes)[keyof typeof MediaRoutes];

/** Limits the spec leaves open (README, API notes). */
export const MediaLimits = {
  /** Inputs in one embeddings request (OpenAI's limit). */
  embeddingInputs: 2048,
  /** Tokens over all inputs of one embeddings request (OpenAI's limit). */
  embeddingTotalTokens: 300_000,
  /** Largest `dimensions` a request may name; a model's `metadata.max_dimensions` may lower it. */
  embeddingDimensions: 16_384,
  /** Inputs in one moderation request. */
  moderationInputs: 100,
  /** Characters of one moderation input. */
  moderationInputChars: 100_000,
  /** Characters of an image prompt (DALL·E 3's limit). */
  imagePromptChars: 4000,
  /** `n` of an image request (spec); a model's `max_images` may lower it. */
  imageCount: 10,
} as const;

export const EncodingFormats = ['float', 'base64'] as const;
export type EncodingFormat = (typeof EncodingFormats)[number];

export const ImageSizes = ['256x256', '512x512', '1024x1024', '1792x1024', '1024x1792'] as const;
export const ImageQualities = ['standard', 'hd'] as const;
export const ImageStyles = ['vivid', 'natural'] as const;
export const ImageResponseFormats = ['url', 'b64_json'] as const;
export type ImageSize = (typeof ImageSizes)[number];
export type ImageQuality = (typeof ImageQualities)[number];
export type ImageStyle = (typeof ImageStyles)[number];
export type ImageResponseFormat = (typeof ImageResponseFormats)[number];

/** What the spec leaves open: the defaults of an image request (README, API notes). */
export const ImageDefaults = {
  n: 1,
  size: '1024x1024' as ImageSize,
  quality: 'standard' as ImageQuality,
  style: 'vivid' as ImageStyle,
  response_format: 'url' as ImageResponseFormat,
  public: false,
};

/** The 11 moderation categories of the spec, in its order. */
export const ModerationCategories = [
  'sexual',
  'hate',
  'harassment',
  'self-harm',
  'sexual/minors',
  'hate/threatening',
  'violence/graphic',
  'self-harm/intent',
  'self-harm/instructions',
  'harassment/threatening',
  'violence',
] as const;
export type ModerationCategory = (typeof ModerationCategories)[number];

interface TextInputRules {
  maxItems: number;
  /** Whether `""` is an acceptable input. */
  allowEmpty: boolean;
  /** Longest input, in characters. */
  maxChars?: number;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Why `value` is not a string or an array of strings under `rules`, naming the offending item; null when it is. */
export function textInputProblem(field: string, value: unknown, rules: TextInputRules): string | null {
  const strings = rules.allowEmpty ? 'strings' : 'non-empty strings';
  const shape = `${field} must be a string or an array of 1 to ${rules.maxItems} ${strings}`;
  const itemProblem = (item: unknown, name: string): string | null => {
    if (typeof item !== 'string') return `${shape}; ${name} is ${describeValue(item)}`;
    if (!rules.allowEmpty && item.length === 0) return `${shape}; ${name} is empty`;
    if (rules.maxChars !== undefined && item.length > rules.maxChars) return `${name} is longer than ${rules.maxChars} characters`;
    return null;
  };
  if (value === undefined) return `${field} is required: ${shape}`;
  if (!Array.isArray(value)) return itemProblem(value, field);
  if (value.length === 0 || value.length > rules.maxItems) return `${shape}; it has ${value.length} items`;
  for (const [index, item] of value.entries()) {
    const problem = itemProblem(item, `${field}.${index}`);
    if (problem) return problem;
  }
  return null;
}

/** A string or an array of strings (the `input` of embeddings and moderations). */
function IsTextInput(rules: TextInputRules, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTextInput',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => textInputProblem(args.property, args.value, rules) ?? `${args.property} is invalid`,
        ...options,
      },
      validator: { validate: (value: unknown, args?: ValidationArguments) => textInputProblem(args?.property ?? 'input', value, rules) === null },
    });
}

// class-validator reports a field's failed constraints bottom-up and the first one is the
// message: the type check sits nearest the property so that a missing field says so.
// The OpenAPI reference is generated from these classes (apps/edge-gateway/src/openapi): each
// `@ApiProperty` states the same limits as the validators beside it, from the same constants.

/** Characters of a model id or a `user` tag. */
const ID_MAX_CHARS = 256;

const modelDoc = (description: string, example: string): ApiPropertyOptions => ({
  type: 'string',
  description,
  example,
  minLength: 1,
  maxLength: ID_MAX_CHARS,
  nullable: true,
});
const userDoc = { type: 'string', description: 'An end-user id, passed on to the upstream.', maxLength: ID_MAX_CHARS, nullable: true } as const;

/** `string | string[]` as the document states it: `oneOf` a string or a bounded array of them. */
function textInputDoc(rules: TextInputRules, description: string): ApiPropertyOptions {
  const text = { type: 'string', ...(rules.allowEmpty ? {} : { minLength: 1 }), ...(rules.maxChars === undefined ? {} : { maxLength: rules.maxChars }) };
  return {
    description,
    oneOf: [text, { type: 'array', items: text, minItems: 1, maxItems: rules.maxItems }],
  };
}

const embeddingInput: TextInputRules = { maxItems: MediaLimits.embeddingInputs, allowEmpty: false };
const moderationInput: TextInputRules = { maxItems: MediaLimits.moderationInputs, allowEmpty: true, maxChars: MediaLimits.moderationInputChars };

/** `POST /v1/embeddings` (spec "Embeddings"). */
@ApiSchema({ name: 'CreateEmbeddingRequest' })
export class EmbeddingsBody {
  @ApiProperty({ description: 'Embedding model id.', example: 'sim-embed', minLength: 1, maxLength: ID_MAX_CHARS })
  @MaxLength(ID_MAX_CHARS)
  @IsNotEmpty({ message: 'model must not be empty' })
  @IsString({ message: 'model must be a string: the id of an embedding model' })
  model: string;

  @ApiProperty(
    textInputDoc(
      embeddingInput,
      `Text to embed. An array batches several inputs (each answer carries its input's \`index\`); at most ${MediaLimits.embeddingTotalTokens} tokens in all, each within the model's context. Token-id arrays are refused.`,
    ),
  )
  @IsTextInput(embeddingInput)
  input: string | string[];

  @ApiPropertyOptional({
    enum: [...EncodingFormats],
    nullable: true,
    default: 'float',
    description: '`base64`: each vector as its little-endian float32 bytes.',
  })
  @IsOptional()
  @IsIn(EncodingFormats, { message: `encoding_format must be one of: ${EncodingFormats.join(', ')}` })
  encoding_format?: EncodingFormat | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MediaLimits.embeddingDimensions,
    nullable: true,
    description: "Output vector size; a model's `metadata.max_dimensions` may lower the maximum. Absent: the model's `metadata.dimensions`.",
  })
  @IsOptional()
  @Max(MediaLimits.embeddingDimensions, { message: `dimensions must be at most ${MediaLimits.embeddingDimensions}` })
  @Min(1, { message: 'dimensions must be at least 1' })
  @IsInt({ message: 'dimensions must be a whole number' })
  dimensions?: number | null;

  @ApiPropertyOptional(userDoc)
  @IsOptional()
  @MaxLength(ID_MAX_CHARS)
  @IsString()
  user?: string | null;
}

/** `POST /v1/moderations` (spec "Moderation"). */
@ApiSchema({ name: 'CreateModerationRequest' })
export class ModerationsBody {
  @ApiProperty(textInputDoc(moderationInput, 'Text to classify; an array gets one result per input, in order. Empty strings are allowed.'))
  @IsTextInput(moderationInput)
  input: string | string[];

  /** Absent: the catalog's first moderation model. */
  @ApiPropertyOptional(modelDoc("Moderation model id. Absent: the catalog's first moderation model.", 'text-moderation-latest'))
  @IsOptional()
  @MaxLength(ID_MAX_CHARS)
  @IsNotEmpty({ message: 'model must not be empty' })
  @IsString({ message: 'model must be a moderation model id' })
  model?: string | null;
}

/** `POST /v1/images/generations` (spec "Image generation"). */
@ApiSchema({ name: 'CreateImageRequest' })
export class ImageGenerationBody {
  @ApiProperty({ description: 'Text description of the image.', minLength: 1, maxLength: MediaLimits.imagePromptChars, example: 'A lighthouse at dusk' })
  @MaxLength(MediaLimits.imagePromptChars, { message: `prompt must be at most ${MediaLimits.imagePromptChars} characters` })
  @IsNotEmpty({ message: 'prompt must not be empty' })
  @IsString({ message: 'prompt must be a string: a text description of the image' })
  prompt: string;

  /** Absent: the catalog's first image model. */
  @ApiPropertyOptional(modelDoc("Image model id. Absent: the catalog's first image model.", 'sim-image'))
  @IsOptional()
  @MaxLength(ID_MAX_CHARS)
  @IsNotEmpty({ message: 'model must not be empty' })
  @IsString({ message: 'model must be an image model id' })
  model?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MediaLimits.imageCount,
    default: ImageDefaults.n,
    nullable: true,
    description: "Images to generate; a model's `max_images` may lower the maximum.",
  })
  @IsOptional()
  @Max(MediaLimits.imageCount, { message: `n must be at most ${MediaLimits.imageCount}` })
  @Min(1, { message: 'n must be at least 1' })
  @IsInt({ message: 'n must be a whole number' })
  n?: number | null;

  @ApiPropertyOptional({
    enum: [...ImageSizes],
    default: ImageDefaults.size,
    nullable: true,
    description: "A model's catalog `sizes` may offer fewer.",
  })
  @IsOptional()
  @IsIn(ImageSizes, { message: `size must be one of: ${ImageSizes.join(', ')}` })
  size?: ImageSize | null;

  @ApiPropertyOptional({
    enum: [...ImageQualities],
    default: ImageDefaults.quality,
    nullable: true,
    description: "A model's catalog `qualities` may offer fewer.",
  })
  @IsOptional()
  @IsIn(ImageQualities, { message: `quality must be one of: ${ImageQualities.join(', ')}` })
  quality?: ImageQuality | null;

  @ApiPropertyOptional({
    enum: [...ImageStyles],
    default: ImageDefaults.style,
    nullable: true,
    description: "A model's catalog `styles` may offer fewer.",
  })
  @IsOptional()
  @IsIn(ImageStyles, { message: `style must be one of: ${ImageStyles.join(', ')}` })
  style?: ImageStyle | null;

  @ApiPropertyOptional({
    enum: [...ImageResponseFormats],
    default: ImageDefaults.response_format,
    nullable: true,
    description: '`url`: a gateway file URL (signed and expiring unless `public`); `b64_json`: the image data, nothing stored.',
  })
  @IsOptional()
  @IsIn(ImageResponseFormats, { message: `response_format must be one of: ${ImageResponseFormats.join(', ')}` })
  response_format?: ImageResponseFormat | null;

  /** Whether the URL works without a signature (`response_format: url` only). */
  @ApiPropertyOptional({
    type: 'boolean',
    default: ImageDefaults.public,
    nullable: true,
    description: 'Whether the URL works without a key or signature, and never expires (`response_format: url` only).',
  })
  @IsOptional()
  @IsBoolean({ message: 'public must be true or false' })
  public?: boolean | null;

  @ApiPropertyOptional(userDoc)
  @IsOptional()
  @MaxLength(ID_MAX_CHARS)
  @IsString()
  user?: string | null;

  /**
   * Streamed images (`partial_images` events) are not offered: `true` is refused rather than
   * answered whole, which an SDK asking for a stream could not read.
   */
  @ApiPropertyOptional({ type: 'boolean', default: false, description: 'Streamed images are not offered: `true` is a 400 naming `stream`.' })
  @IsOptional()
  @IsIn([false], { message: 'stream is not supported on /v1/images/generations or /v1/images/edits: leave it out or send false' })
  @IsBoolean({ message: 'stream must be true or false' })
  stream?: boolean;
}

/**
 * What every media request carries besides the caller. `heartbeats`: the edge follows the router's
 * liveness, so the router sends `HeartbeatFrame`s among the reply's parts while it works (an edge
 * of the previous release does not ask for them, and gets none).
 */
export class MediaRequest extends CallerContext {
  @IsOptional()
  @IsBoolean()
  heartbeats?: boolean;
}

/** `inference.embeddings`: answered with `MediaReplyPart`s of a `json` reply. */
export class EmbeddingsRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => EmbeddingsBody)
  body: EmbeddingsBody;
}

/** `inference.moderations`: answered with `MediaReplyPart`s of a `json` reply. */
export class ModerationsRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => ModerationsBody)
  body: ModerationsBody;
}

/** `inference.images`: answered with `MediaReplyPart`s of an `images` reply (or a `json` error). */
export class ImageGenerationRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => ImageGenerationBody)
  body: ImageGenerationBody;
}

/** One generated image as the router hands it to the edge. */
export interface GeneratedImage {
  /** `response_format: b64_json`: the image itself. */
  b64_json?: string;
  /** `response_format: url`: where the router stored it; the edge makes the URL (signed unless public). */
  file?: { key: string; public: boolean };
  revised_prompt?: string;
}

/**
 * A media route's answer: a body to send as is with its status (embeddings, moderations, every
 * error), or generated images, which the edge renders (it alone signs file URLs).
 */
export type MediaReply =
  | { kind: 'json'; status: number; body: unknown; /** Seconds, sent as `Retry-After` (a 429). */ retryAfter?: number }
  | {
      kind: 'images';
      created: number;
      images: GeneratedImage[];
      /** The upstream's `usage` as it reported it (GPT image models' tokens), passed on to the client. */
      usage?: Record<string, unknown>;
    }
  /** A plain-text body (transcriptions as `text`, `srt`, `vtt`). */
  | { kind: 'text'; status: number; contentType: string; body: string }
  /** Server-sent events, whole (a streamed transcription: the events as the upstream sent them, in order). */
  | { kind: 'sse'; events: { event?: string; data: string }[] };

/**
 * One NATS message of a `MediaReply`: its JSON text, cut into parts because a NATS message is
 * limited (1 MiB by default) and embeddings or images easily exceed that. Parts arrive in order.
 */
export interface MediaReplyPart {
  seq: number;
  text: string;
  last: boolean;
}

/** What the router sends on a media subject: the reply's parts, and heartbeats when asked for them. */
export type MediaMessage = MediaReplyPart | HeartbeatFrame;

export function isHeartbeat(message: object): message is HeartbeatFrame {
  return (message as { kind?: unknown }).kind === 'heartbeat';
}

/**
 * Characters per part: JSON keeps non-ASCII characters as they are (at most 3 UTF-8 bytes per
 * UTF-16 unit) and the envelope escapes quotes (2 bytes), so a part stays under 768 KiB.
 */
export const MEDIA_PART_CHARS = 256 * 1024;

export function splitMediaReply(reply: MediaReply, partChars = MEDIA_PART_CHARS): MediaReplyPart[] {
  const text = JSON.stringify(reply);
  const parts: MediaReplyPart[] = [];
  for (let offset = 0, seq = 0; offset < text.length || seq === 0; offset += partChars, seq++) {
    parts.push({ seq, text: text.slice(offset, offset + partChars), last: offset + partChars >= text.length });
  }
  return parts;
}

/** The reply the parts carry; throws when parts are missing or out of order. */
export function joinMediaReply(parts: MediaReplyPart[]): MediaReply {
  if (parts.length === 0 || !parts[parts.length - 1].last || parts.some((part, index) => part.seq !== index)) {
    throw new Error(`incomplete media reply: ${parts.length} parts`);
  }
  return JSON.parse(parts.map((part) => part.text).join('')) as MediaReply;
}
