import { parseAspectRatio } from '@gateway/contracts';
import type { UpstreamRoute } from '../provider-adapter';
import { type GeneratedVideo, numberOption, VideoJobError, type VideoRequest, type VideoStatus } from '../video';
import { writeMjpegAvi } from './media/avi-writer';
import { clipDimensions, renderTestPattern } from './media/test-pattern';

const PROGRESS_STEPS = 10;
const ID_PREFIX = 'sim-video-';

/** The route's settings, checked before anything starts. */
function settings(route: UpstreamRoute) {
  return {
    durationMs: numberOption(route, 'duration_ms', 8000, 0, 3_600_000),
    clipSeconds: numberOption(route, 'clip_seconds', 2, 1, 30),
    fps: Math.round(numberOption(route, 'fps', 8, 1, 30)),
  };
}

const aspectOf = (size: string) => {
  const aspect = parseAspectRatio(size);
  if (!aspect) throw new VideoJobError('invalid_size', `size ${size} is not <w>:<h>`, false);
  return aspect;
};

/**
 * The built-in video model: a generation takes `options.duration_ms` (default 8 s), reporting
 * progress in tenths, then is a real clip — a Motion-JPEG AVI of `options.clip_seconds` (default
 * 2) at `options.fps` (default 8), long side 160 pixels, in the requested aspect ratio. Its id is
 * its start time, so any worker can poll it (no state is kept).
 */
export const simulatorVideos = {
  async create(route: UpstreamRoute, request: VideoRequest): Promise<string> {
    settings(route);
    aspectOf(request.size);
    return `${ID_PREFIX}${Date.now()}`;
  },

  async poll(route: UpstreamRoute, id: string): Promise<VideoStatus> {
    const startedAt = Number(id.slice(ID_PREFIX.length));
    if (!id.startsWith(ID_PREFIX) || !Number.isFinite(startedAt)) return { status: 'failed', error: `no simulated video ${id}` };
    const { durationMs } = settings(route);
    const elapsed = Date.now() - startedAt;
    if (elapsed >= durationMs) return { status: 'completed' };
    const stepMs = durationMs / PROGRESS_STEPS;
    const step = Math.floor(elapsed / stepMs);
    // Asked again just after the next tenth (a millisecond late, never early).
    const nextPollMs = Math.max(1, Math.ceil((step + 1) * stepMs - elapsed) + 1);
    return { status: 'in_progress', progress: step > 0 ? (100 * step) / PROGRESS_STEPS : undefined, nextPollMs };
  },

  async download(route: UpstreamRoute, _id: string, request: VideoRequest): Promise<GeneratedVideo> {
    const { clipSeconds, fps } = settings(route);
    const { width, height } = clipDimensions(aspectOf(request.size));
    const frameCount = Math.round(clipSeconds * fps);
    const frames = renderTestPattern({ width, height, frames: frameCount, seed: request.prompt });
    return {
      body: writeMjpegAvi({ width, height, framesPerSecond: fps, frames }),
      contentType: 'video/x-msvideo',
      extension: 'avi',
      duration: frameCount / fps,
      resolution: `${width}x${height}`,
    };
  },
};
