/**
 * The objects of a video stream (`POST /v1/videos/generations`), one JSON object per line (spec,
 * Events 1); payloads beyond `heartbeat` are ours (README, API notes). The edge writes them.
 */
import { type Static, Type } from 'typebox';
import { Literals } from '../schema/schema-helpers';

export const VideoHeartbeat = Type.Object(
  { heartbeat: Type.Unsafe<true>({ type: 'boolean', enum: [true] }) },
  { description: 'Written every `VIDEO_HEARTBEAT_MS` (default 10 s) while the job runs.' },
);

export const VideoProgress = Type.Object({
  id: Type.String({ description: 'The job id (the request id of the POST that created it).' }),
  object: Literals(['video.generation.progress']),
  status: Literals(['queued', 'in_progress']),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
});

const VideoCompleted = Type.Object({
  id: Type.String(),
  object: Literals(['video.generation']),
  status: Literals(['completed']),
  model: Type.String(),
  size: Type.String({ description: 'The aspect ratio, e.g. `16:9`.' }),
  resolution: Type.String({ description: 'Pixels, e.g. `320x180`.' }),
  duration: Type.Number({ description: 'Seconds.' }),
  content_type: Type.String({ description: 'e.g. `video/x-msvideo`.' }),
  url: Type.String({ format: 'uri', description: 'A signed `/v1/files/videos/...` URL valid for `FILE_URL_TTL_SECONDS`.' }),
});

const VideoFailed = Type.Object({
  id: Type.String(),
  object: Literals(['video.generation']),
  status: Literals(['failed']),
  error: Type.Object({
    message: Type.String(),
    type: Literals(['video_generation_error']),
    code: Type.String({ description: 'e.g. `upstream_error`, `internal_error`.' }),
  }),
});

export const VideoGeneration = Type.Unsafe<Static<typeof VideoCompleted> | Static<typeof VideoFailed>>({
  oneOf: [VideoCompleted, VideoFailed],
  discriminator: { propertyName: 'status' },
  description: 'The last object of the stream: the result (`completed`), or the failure (`failed`).',
});

export type VideoStreamEvent = Static<typeof VideoHeartbeat> | Static<typeof VideoProgress> | Static<typeof VideoGeneration>;

export const VIDEO_STREAM_DESCRIPTION =
  'A `text/event-stream` in which every non-empty line is one JSON object (no `data:` prefix): ' +
  '`VideoHeartbeat` lines while the job runs, `VideoProgress` objects, then one `VideoGeneration` ' +
  '(completed or failed), after which the stream ends. Headers `x-request-id` and `x-video-job-id` carry the job id.';
