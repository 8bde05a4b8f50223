import type { UpstreamRoute } from './provider-adapter';

/** One video to generate (`ProviderAdapter.generateVideo`). */
export interface VideoRequest {
  /** The job (and request) id: names the work upstream where a provider takes a client reference. */
  jobId: string;
  prompt: string;
  /** Aspect ratio `<w>:<h>`, validated against the model's sizes by the edge. */
  size: string;
}

/** What a video generation reports back while it runs, and how it is stopped or resumed. */
export interface VideoContext {
  /** Aborted when the worker shuts down: stop waiting, the job is resumed by another worker. */
  signal: AbortSignal;
  /** 0 to 100. */
  progress(percent: number): Promise<void>;
  /** An upstream generation started on a previous attempt of this job, to poll instead of starting anew. */
  resumeId?: string;
  /** Called once an upstream generation exists, so a retry can resume it. */
  started(upstreamId: string): Promise<void>;
}

export interface GeneratedVideo {
  body: Buffer;
  contentType: string;
  /** File extension for the object key, without the dot. */
  extension: string;
  /** Seconds of video. */
  duration: number;
  /** `<width>x<height>` in pixels. */
  resolution: string;
}

/**
 * A video generation's failure the client may read. `retryable` failures (timeouts, upstream 5xx,
 * 429, unreachable) let BullMQ try the job again; the others (the upstream refused the prompt) fail
 * it at once.
 */
export class VideoJobError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    /** The provider's answer: its HTTP status, and a 429's Retry-After (seconds), which the route's breaker honours. */
    readonly upstream: { status?: number; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'VideoJobError';
  }
}

/** Number route options (`options.duration_ms`), with a default and bounds. */
export function numberOption(route: UpstreamRoute, name: string, fallback: number, min: number, max: number): number {
  const value = route.options?.[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new VideoJobError('invalid_model_config', `catalog route option ${name} must be a number from ${min} to ${max}`, false);
  }
  return value;
}
