import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Length, Matches, Min, ValidateNested } from 'class-validator';
import { CallerContext } from '../inference/text-generation.messages';

/** The usage route of video generation, as request logs and `/user/me` spell it. */
export const VIDEO_ROUTE = 'videos.generations';

export const VIDEO_PROMPT_MAX_CHARS = 10_000;

const ASPECT_RATIO = /^([1-9]\d{0,3}):([1-9]\d{0,3})$/;

/** `POST /v1/videos/generations`. Which sizes a model allows is the catalog's business (the edge checks). */
@ApiSchema({ name: 'CreateVideoRequest' })
export class VideoGenerationBody {
  @ApiProperty({ minLength: 1, maxLength: 256, description: 'A video model id.', example: 'sim-video' })
  @IsString({ message: 'model is required: a video model id (string)' })
  @Length(1, 256, { message: 'model must be 1 to 256 characters' })
  model: string;

  @ApiProperty({ minLength: 1, maxLength: VIDEO_PROMPT_MAX_CHARS, description: 'Text description.' })
  @IsString({ message: 'prompt is required: a text description (string)' })
  @Length(1, VIDEO_PROMPT_MAX_CHARS, { message: `prompt must be 1 to ${VIDEO_PROMPT_MAX_CHARS} characters` })
  prompt: string;

  @ApiPropertyOptional({
    pattern: ASPECT_RATIO.source,
    description: "An aspect ratio `<w>:<h>`, one of the model's catalog `sizes` (default: its first).",
    example: '16:9',
  })
  @IsOptional()
  @IsString({ message: 'size must be a string of the form <w>:<h>, e.g. 16:9' })
  @Matches(ASPECT_RATIO, { message: 'size must be an aspect ratio of the form <w>:<h>, e.g. 16:9' })
  size?: string;
}

export class UpstreamGeneration {
  /** Index of the catalog route that started it. */
  @IsInt()
  @Min(0)
  route: number;

  @IsString()
  id: string;
}

/**
 * Data of a `VideoJobs.generate` job. The job id is the request id of the POST that created it, and
 * that id is the usage event's request id too: a job retried after a crash cannot be charged twice.
 */
export class VideoJobData {
  @ValidateNested()
  @Type(() => CallerContext)
  caller: CallerContext;

  /** Public model id (catalog). */
  @IsString()
  @Length(1, 256)
  model: string;

  @IsString()
  @Length(1, VIDEO_PROMPT_MAX_CHARS)
  prompt: string;

  /** Aspect ratio `<w>:<h>`, one of the model's `sizes`. */
  @Matches(ASPECT_RATIO)
  size: string;

  /** W3C trace context of the request that created the job (filled once tracing is wired). */
  @IsOptional()
  @IsObject()
  traceContext?: Record<string, string>;

  /**
   * Set by the worker once an upstream generation has started, so a retry (another worker, after a
   * crash) polls that generation instead of paying for a second one.
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamGeneration)
  upstream?: UpstreamGeneration;
}

/** What a job reports through BullMQ while it runs. */
export interface VideoJobProgress {
  status: 'queued' | 'in_progress';
  /** 0 to 100. */
  progress: number;
}

/** What a completed job returns: the video lies in the object store under `objectKey` (private). */
export interface VideoJobResult {
  objectKey: string;
  contentType: string;
  model: string;
  size: string;
  /** Pixels of the stored video, e.g. `160x90`. */
  resolution: string;
  /** Seconds of video. */
  duration: number;
}

/** Why a job failed, as the client may see it. BullMQ keeps it as the job's `failedReason`. */
export interface VideoJobFailure {
  code: string;
  message: string;
}

export function encodeVideoJobFailure(failure: VideoJobFailure): string {
  return JSON.stringify(failure);
}

/** BullMQ's own reasons (a job stalled too often) are plain text; they are safe to show as they are. */
export function decodeVideoJobFailure(reason: string | undefined): VideoJobFailure {
  if (reason) {
    try {
      const parsed = JSON.parse(reason) as Partial<VideoJobFailure>;
      if (typeof parsed?.code === 'string' && typeof parsed.message === 'string') return { code: parsed.code, message: parsed.message };
    } catch {
      // plain text
    }
  }
  return { code: 'video_generation_failed', message: reason ? `Video generation failed: ${reason}` : 'Video generation failed' };
}

/** `16:9` → `{width: 16, height: 9}`; null for anything that is not `<w>:<h>` with positive integers. */
export function parseAspectRatio(size: string): { width: number; height: number } | null {
  const match = ASPECT_RATIO.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}
