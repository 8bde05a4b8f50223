import { setTimeout as delay } from 'node:timers/promises';
import type { ProviderAdapter, UpstreamRoute } from './provider-adapter';

/** One video to generate (`ProviderAdapter.createVideo`). */
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

/** An upstream video generation as one poll found it (`ProviderAdapter.pollVideo`). */
export interface VideoStatus {
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** 0 to 100, when the provider says. */
  progress?: number;
  /** Why it failed (`failed`). */
  error?: string;
  /** When to poll again; default the route's `options.poll_interval_ms` (5 s). */
  nextPollMs?: number;
  /** Seconds of video, and `<width>x<height>`, when the provider says. */
  duration?: number;
  resolution?: string;
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

/**
 * One video with a provider's video methods, start to file: creates the upstream generation
 * (reported through `context.started`, so a retry resumes it) unless `context.resumeId` names one,
 * polls it every `options.poll_interval_ms` (default 5 s, or when the provider says) reporting its
 * progress, for at most `options.timeout_ms` (default 20 min), then downloads the file.
 */
export async function generateVideo(
  adapter: ProviderAdapter | undefined,
  route: UpstreamRoute,
  request: VideoRequest,
  context: VideoContext,
): Promise<GeneratedVideo> {
  if (!adapter?.createVideo || !adapter.pollVideo || !adapter.downloadVideo) {
    throw new VideoJobError('invalid_model_config', `the ${route.adapter} adapter cannot generate videos`, false);
  }
  const pollMs = numberOption(route, 'poll_interval_ms', 5000, 10, 600_000);
  const timeoutMs = numberOption(route, 'timeout_ms', 1_200_000, 1000, 86_400_000);
  let id = context.resumeId;
  if (!id) {
    id = await adapter.createVideo(route, request, context.signal);
    await context.started(id);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await adapter.pollVideo(route, id, context.signal);
    if (status.status === 'completed') return adapter.downloadVideo(route, id, request, status, context.signal);
    if (status.status === 'failed') {
      throw new VideoJobError('generation_failed', `The video provider could not generate this video: ${status.error ?? 'no reason given'}`, false);
    }
    if (typeof status.progress === 'number' && Number.isFinite(status.progress)) {
      await context.progress(Math.max(0, Math.min(99, status.progress)));
    }
    if (Date.now() >= deadline) {
      throw new VideoJobError('upstream_timeout', `The video provider did not finish within ${Math.round(timeoutMs / 1000)} s`, true);
    }
    await delay(status.nextPollMs ?? pollMs, undefined, { signal: context.signal });
  }
}
