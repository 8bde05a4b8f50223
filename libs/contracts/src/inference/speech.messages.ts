import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsNotEmpty, IsNumber, IsOptional, IsString, Max, MaxLength, Min, registerDecorator, ValidateNested, ValidationArguments } from 'class-validator';
import { MediaRequest } from './media.messages';
import type { HeartbeatFrame } from './text-generation.messages';

/** The usage route of `POST /v1/audio/speech`, as request logs and `/user/me` spell it. */
export const SPEECH_ROUTE = 'audio.speech';

/** OpenAI's limits of a speech request. */
export const SpeechLimits = {
  /** Characters (Unicode code points) of `input`. */
  inputChars: 4096,
  /** Characters of `instructions`. */
  instructionsChars: 4096,
  minSpeed: 0.25,
  maxSpeed: 4,
} as const;

export const SpeechResponseFormats = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechResponseFormat = (typeof SpeechResponseFormats)[number];
export const SpeechStreamFormats = ['audio', 'sse'] as const;
export type SpeechStreamFormat = (typeof SpeechStreamFormats)[number];

export const SpeechDefaults = {
  response_format: 'mp3' as SpeechResponseFormat,
  speed: 1,
  stream_format: 'audio' as SpeechStreamFormat,
};

/** The content type of each audio format, as OpenAI answers them. */
export const SPEECH_CONTENT_TYPES: Record<SpeechResponseFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Characters as the speech limit and the speech price count them: Unicode code points, not UTF-16 units. */
export const speechCharacters = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

/** A voice: a name (the model's catalog `voices`), or `{id}` (a custom voice of the upstream). */
export type SpeechVoice = string | { id: string };

const VOICE_MAX_CHARS = 256;

/** Why `value` is not a voice; null when it is. */
export function voiceProblem(value: unknown): string | null {
  const shape = 'voice must be a voice name or an object {id}';
  if (value === undefined || value === null) return `voice is required: ${shape}`;
  if (typeof value === 'string') {
    if (value.length === 0) return 'voice must not be empty';
    return value.length > VOICE_MAX_CHARS ? `voice must be at most ${VOICE_MAX_CHARS} characters` : null;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return shape;
  const keys = Object.keys(value);
  const id = (value as { id?: unknown }).id;
  if (keys.length !== 1 || typeof id !== 'string' || id.length === 0 || id.length > VOICE_MAX_CHARS) {
    return `${shape}; an object holds one field, id, a non-empty string of at most ${VOICE_MAX_CHARS} characters`;
  }
  return null;
}

function IsVoice(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isVoice',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => voiceProblem(args.value) ?? 'voice is invalid' },
      validator: { validate: (value: unknown) => voiceProblem(value) === null },
    });
}

function IsSpeechInput(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSpeechInput',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `input must be at most ${SpeechLimits.inputChars} characters` },
      validator: { validate: (value: unknown) => typeof value !== 'string' || speechCharacters(value) <= SpeechLimits.inputChars },
    });
}

/** `POST /v1/audio/speech` (OpenAI's shape, as `openai.audio.speech.create` sends it). */
@ApiSchema({ name: 'CreateSpeechRequest' })
export class SpeechBody {
  @ApiProperty({ description: 'Speech model id (one whose `endpoints` list `audio.speech`).', example: 'sim-tts', minLength: 1, maxLength: 256 })
  @MaxLength(256)
  @IsNotEmpty({ message: 'model must not be empty' })
  @IsString({ message: 'model must be a string: the id of a speech model' })
  model: string;

  @ApiProperty({ description: 'The text to speak.', minLength: 1, maxLength: SpeechLimits.inputChars, example: 'Hello there!' })
  @IsSpeechInput()
  @IsNotEmpty({ message: 'input must not be empty' })
  @IsString({ message: 'input must be a string: the text to speak' })
  input: string;

  @ApiProperty({
    description: "A voice the model lists in its catalog `voices` (`GET /v1/models`), or `{id}`: a custom voice of the model's upstream.",
    oneOf: [
      { type: 'string', minLength: 1, maxLength: VOICE_MAX_CHARS, example: 'alloy' },
      { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', minLength: 1, maxLength: VOICE_MAX_CHARS } } },
    ],
  })
  @IsVoice()
  voice: SpeechVoice;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: SpeechLimits.instructionsChars,
    nullable: true,
    description: 'How to speak (tone, pace); passed to the upstream.',
  })
  @IsOptional()
  @MaxLength(SpeechLimits.instructionsChars, { message: `instructions must be at most ${SpeechLimits.instructionsChars} characters` })
  @IsString({ message: 'instructions must be a string' })
  instructions?: string | null;

  @ApiPropertyOptional({
    enum: [...SpeechResponseFormats],
    default: SpeechDefaults.response_format,
    nullable: true,
    description: "The audio format; a model's catalog `metadata.response_formats` may offer fewer (`sim-tts`: `mp3`, `wav`, `pcm`).",
  })
  @IsOptional()
  @IsIn(SpeechResponseFormats, { message: `response_format must be one of: ${SpeechResponseFormats.join(', ')}` })
  response_format?: SpeechResponseFormat | null;

  @ApiPropertyOptional({ type: 'number', minimum: SpeechLimits.minSpeed, maximum: SpeechLimits.maxSpeed, default: 1, nullable: true })
  @IsOptional()
  @Max(SpeechLimits.maxSpeed, { message: `speed must be at most ${SpeechLimits.maxSpeed}` })
  @Min(SpeechLimits.minSpeed, { message: `speed must be at least ${SpeechLimits.minSpeed}` })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'speed must be a number from 0.25 to 4' })
  speed?: number | null;

  @ApiPropertyOptional({
    enum: [...SpeechStreamFormats],
    default: SpeechDefaults.stream_format,
    nullable: true,
    description:
      '`audio`: the audio bytes, streamed as they come; `sse`: server-sent events `speech.audio.delta` `{audio}` (base64) and `speech.audio.done` `{usage}`.',
  })
  @IsOptional()
  @IsIn(SpeechStreamFormats, { message: `stream_format must be one of: ${SpeechStreamFormats.join(', ')}` })
  stream_format?: SpeechStreamFormat | null;
}

/** `inference.speech`: answered with `SpeechFrame`s. */
export class SpeechRequest extends MediaRequest {
  @ValidateNested()
  @Type(() => SpeechBody)
  body: SpeechBody;
}

/** What a speech request used, as `speech.audio.done` reports it. */
export interface SpeechUsage {
  /** Characters of `input`: what the request is billed by when the upstream reports no tokens. */
  input_characters: number;
  /** The upstream's token counts, when it reported them (they are billed instead of the characters). */
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
}

/**
 * What the router sends on `inference.speech`: an error (`json`, before any audio), or `start` (the
 * audio's content type), `audio` chunks (base64, in order) and `done` (the usage), besides heartbeats.
 */
export type SpeechFrame =
  | { kind: 'json'; status: number; body: unknown; retryAfter?: number }
  | { kind: 'start'; contentType: string; router?: string }
  | { kind: 'audio'; data: string }
  | { kind: 'done'; usage: SpeechUsage }
  | HeartbeatFrame;

/** Bytes of audio per `audio` frame: well under NATS's 1 MiB max_payload once base64-encoded. */
export const SPEECH_CHUNK_BYTES = 64 * 1024;
