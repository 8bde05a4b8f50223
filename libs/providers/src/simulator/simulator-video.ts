import { parseAspectRatio } from '@gateway/contracts';
import { setTimeout as delay } from 'node:timers/promises';
import type { UpstreamRoute } from '../provider-adapter';
import { type GeneratedVideo, numberOption, type VideoContext, VideoJobError, type VideoRequest } from '../video';
import { writeMjpegAvi } from './media/avi-writer';
import { clipDimensions, renderTestPattern } from './media/test-pattern';

const PROGRESS_STEPS = 10;

/**
 * The built-in video model: takes `options.duration_ms` (default 8 s) reporting progress in tenths,
 * then draws a real clip — a Motion-JPEG AVI of `options.clip_seconds` (default 2) at
 * `options.fps` (default 8), long side 160 pixels, in the requested aspect ratio.
 */
export async function simulateVideo(route: UpstreamRoute, request: VideoRequest, context: VideoContext): Promise<GeneratedVideo> {
  const durationMs = numberOption(route, 'duration_ms', 8000, 0, 3_600_000);
  const clipSeconds = numberOption(route, 'clip_seconds', 2, 1, 30);
  const fps = Math.round(numberOption(route, 'fps', 8, 1, 30));
  const aspect = parseAspectRatio(request.size);
  if (!aspect) throw new VideoJobError('invalid_size', `size ${request.size} is not <w>:<h>`, false);

  for (let step = 1; step < PROGRESS_STEPS; step++) {
    await delay(durationMs / PROGRESS_STEPS, undefined, { signal: context.signal });
    await context.progress((100 * step) / PROGRESS_STEPS);
  }
  const { width, height } = clipDimensions(aspect);
  const frameCount = Math.round(clipSeconds * fps);
  const frames = renderTestPattern({ width, height, frames: frameCount, seed: request.prompt });
  await delay(durationMs / PROGRESS_STEPS, undefined, { signal: context.signal });
  return {
    body: writeMjpegAvi({ width, height, framesPerSecond: fps, frames }),
    contentType: 'video/x-msvideo',
    extension: 'avi',
    duration: frameCount / fps,
    resolution: `${width}x${height}`,
  };
}
