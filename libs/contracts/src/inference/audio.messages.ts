import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import type { HeartbeatFrame } from './text-generation.messages';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MediaRequest } from './media.messages';

/** Formats of a transcription or translation answer (OpenAI's). `text`, `srt` and `vtt` are plain text and carry no usage. */
export const TranscriptionResponseFormats = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionResponseFormat = (typeof TranscriptionResponseFormats)[number];
export const TimestampGranularities = ['word', 'segment'] as const;
export type TimestampGranularity = (typeof TimestampGranularities)[number];

/** Limits of the audio routes the spec leaves open (API notes). */
export const AudioLimits = {
  /** Characters of `prompt` (OpenAI counts 224 tokens; a character bound is what the edge can check). */
  promptChars: 4000,
  /** Characters of `language` (an ISO-639-1 code, or a longer BCP-47 tag some upstreams take). */
  languageChars: 32,
} as const;

const MODEL_MAX_CHARS = 256;

/**
 * An uploaded file the edge staged in the object store while it read the request (never sent over
 * NATS): the router streams it from there to the upstream and deletes it after the call.
 */
export class StagedFile {
  /** Object-store key (`uploads/<uuid>`). */
  @IsString()
  @MaxLength(512)
  key: string;

  /** The file name the client sent (upstreams read the format from its extension). */
  @IsString()
  @MaxLength(1024)
  filename: string;

  @IsString()
  @MaxLength(256)
  content_type: string;

  @IsInt()
  @Min(0)
  bytes: number;

  /** Audio: the duration read from the container header while the upload streamed in. */
  @IsOptional()
  @IsNumber()
  @Min(0)
  duration_seconds?: number;
}

/** The multipart fields both audio routes take. */
class AudioUploadBody {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The audio file: flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm.' })
  @ValidateNested()
  @Type(() => StagedFile)
  file: StagedFile;

  @ApiProperty({
    description: 'Transcription model id (a catalog model serving the route).',
    example: 'sim-transcribe',
    minLength: 1,
    maxLength: MODEL_MAX_CHARS,
  })
  @MaxLength(MODEL_MAX_CHARS)
  @IsNotEmpty({ message: 'model must not be empty' })
  @IsString({ message: 'model must be a string: the id of a transcription model' })
  model: string;

  @ApiPropertyOptional({ description: "Text to guide the model's style or continue a previous segment.", maxLength: AudioLimits.promptChars })
  @IsOptional()
  @MaxLength(AudioLimits.promptChars, { message: `prompt must be at most ${AudioLimits.promptChars} characters` })
  @IsString({ message: 'prompt must be a string' })
  prompt?: string;

  @ApiPropertyOptional({
    enum: [...TranscriptionResponseFormats],
    default: 'json',
    description: '`text`, `srt` and `vtt` answer plain text (no usage in the answer; billed all the same).',
  })
  @IsOptional()
  @IsIn(TranscriptionResponseFormats, { message: `response_format must be one of: ${TranscriptionResponseFormats.join(', ')}` })
  response_format?: TranscriptionResponseFormat;

  @ApiPropertyOptional({ type: 'number', minimum: 0, maximum: 1, default: 0, description: 'Sampling temperature.' })
  @IsOptional()
  @Max(1, { message: 'temperature must be at most 1' })
  @Min(0, { message: 'temperature must be at least 0' })
  @IsNumber({}, { message: 'temperature must be a number' })
  temperature?: number;
}

/** `POST /v1/audio/transcriptions` (multipart/form-data). */
@ApiSchema({ name: 'CreateTranscriptionRequest' })
export class TranscriptionBody extends AudioUploadBody {
  @ApiPropertyOptional({ description: 'The language of the audio, ISO-639-1 (`en`).', maxLength: AudioLimits.languageChars })
  @IsOptional()
  @MaxLength(AudioLimits.languageChars, { message: `language must be at most ${AudioLimits.languageChars} characters` })
  @IsString({ message: 'language must be a string' })
  language?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...TimestampGranularities] },
    description: 'Sent as `timestamp_granularities[]`; needs `response_format: verbose_json`.',
  })
  @IsOptional()
  @ArrayMaxSize(TimestampGranularities.length)
  @IsIn(TimestampGranularities, { each: true, message: `timestamp_granularities must hold only: ${TimestampGranularities.join(', ')}` })
  @IsArray({ message: 'timestamp_granularities must be a list' })
  timestamp_granularities?: TimestampGranularity[];

  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description: 'Server-sent events `transcript.text.delta` and `transcript.text.done` (with usage); `json` and `text` formats only.',
  })
  @IsOptional()
  @IsBoolean({ message: 'stream must be true or false' })
  stream?: boolean;
}

/** `POST /v1/audio/translations` (multipart/form-data): into English. */
@ApiSchema({ name: 'CreateTranslationRequest' })
export class TranslationBody extends AudioUploadBody {}

/** `inference.transcriptions`: answered with `MediaReplyPart`s of a `json`, `text` or `sse` reply. */
export class TranscriptionRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => TranscriptionBody)
  body: TranscriptionBody;
}

/**
 * What the router sends on `inference.transcription-stream` (a transcription with `stream: true`):
 * an error (`json`, before any event), or `start`, then each upstream event as it comes (`event`,
 * its JSON text; the last one `transcript.text.done` with the billed usage), besides heartbeats.
 */
export type TranscriptionFrame =
  { kind: 'json'; status: number; body: unknown; retryAfter?: number } | { kind: 'start'; router?: string } | { kind: 'event'; data: string } | HeartbeatFrame;

/** `inference.translations`: as `inference.transcriptions`, without `language`, granularities or `stream`. */
export class TranslationRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => TranslationBody)
  body: TranslationBody;
}
