import { DomainError, ErrorCode } from '@gateway/errors';
import { probeAudio } from '@gateway/platform';
import type { Readable } from 'node:stream';
import type { EdgeEnv } from '../config/edge.env';
import type { UploadSpec } from '../uploads/multipart-upload.decorator';

/** The containers OpenAI's audio routes take, as the API notes list them. */
export const AUDIO_FORMATS = 'flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm';

/**
 * The duration of an uploaded audio file, read from its container header while it streams into the
 * store: what the request is reserved at, and billed at when the upstream reports nothing. A file
 * whose duration cannot be read is refused (400 naming the field): it could not be priced.
 */
export async function inspectAudio(stream: Readable, part: { field: string; filename: string; mimeType: string }): Promise<Record<string, unknown>> {
  const mimeType = part.mimeType && part.mimeType !== 'application/octet-stream' ? part.mimeType : undefined;
  const probe = await probeAudio(stream, { mimeType, path: part.filename });
  if (!probe) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `${part.field} is not an audio file whose duration can be read from its header (${AUDIO_FORMATS})`,
      part.field,
    );
  }
  return { duration_seconds: probe.durationSeconds };
}

/** The multipart form of `/v1/audio/transcriptions` and `/v1/audio/translations`. */
export const audioUpload = (env: EdgeEnv): UploadSpec => ({
  files: { file: { maxBytes: env.AUDIO_UPLOAD_MAX_FILE_BYTES, inspect: inspectAudio } },
  maxRequestBytes: env.AUDIO_UPLOAD_MAX_REQUEST_BYTES,
  arrays: ['timestamp_granularities'],
  numbers: ['temperature'],
  booleans: ['stream'],
});
