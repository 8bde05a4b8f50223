import { VideoJobFailure, VideoJobProgress } from '@gateway/contracts';

/**
 * The objects of a video stream, one JSON object per line (spec, Events 1). Payloads beyond
 * `heartbeat` are ours (README, API notes):
 *   {"heartbeat":true}                                             the job is still pending
 *   {"id","object":"video.generation.progress","status","progress"}   queued / in_progress, 0–100
 *   {"id","object":"video.generation","status":"completed","model","size","resolution","duration","content_type","url"}
 *   {"id","object":"video.generation","status":"failed","error":{"message","type","code"}}
 */
export type VideoStreamEvent =
  | { heartbeat: true }
  | { id: string; object: 'video.generation.progress'; status: VideoJobProgress['status']; progress: number }
  | {
      id: string;
      object: 'video.generation';
      status: 'completed';
      model: string;
      size: string;
      resolution: string;
      duration: number;
      content_type: string;
      url: string;
    }
  | { id: string; object: 'video.generation'; status: 'failed'; error: { message: string; type: string; code: string } };

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
