import { VideoJobFailure, VideoJobProgress, type VideoStreamEvent } from '@gateway/contracts';

export type { VideoStreamEvent };

export const HEARTBEAT: VideoStreamEvent = { heartbeat: true };

/**
 * One event as written on the wire: its JSON on a line of its own, then a blank line. JSON.stringify
 * escapes every newline inside strings, so a line is always exactly one object. No `data: ` prefix:
 * the spec makes each non-empty line the JSON itself.
 */
export function encodeVideoEvent(event: VideoStreamEvent): string {
  return `${JSON.stringify(event)}\n\n`;
}

export function progressEvent(id: string, progress: VideoJobProgress): VideoStreamEvent {
  const percent = Number.isFinite(progress.progress) ? Math.max(0, Math.min(100, Math.round(progress.progress))) : 0;
  return { id, object: 'video.generation.progress', status: progress.status === 'in_progress' ? 'in_progress' : 'queued', progress: percent };
}

export function failedEvent(id: string, failure: VideoJobFailure): VideoStreamEvent {
  return { id, object: 'video.generation', status: 'failed', error: { message: failure.message, type: 'video_generation_error', code: failure.code } };
}
