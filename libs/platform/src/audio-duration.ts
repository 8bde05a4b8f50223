import type { Readable } from 'node:stream';

/** What the container header of an audio file says. */
export interface AudioProbe {
  /** Seconds, as the container states them (or as counted from its frames when it states none). */
  durationSeconds: number;
  /** The container music-metadata recognised (`WAVE`, `MPEG`, `FLAC`, `Ogg`, `EBML/webm`, `M4A/…`). */
  container: string;
}

/** The part of music-metadata used here (its types are ES-module exports this build's resolution does not read). */
interface MusicMetadata {
  parseStream(
    stream: Readable,
    fileInfo: { mimeType?: string; size?: number; path?: string },
    options: { duration: boolean; skipCovers: boolean },
  ): Promise<{ format: { duration?: number; container?: string; hasAudio?: boolean } }>;
}
let musicMetadata: MusicMetadata | undefined;

/**
 * music-metadata is an ES module: loaded on first use (Node ≥ 20.19 requires ES modules), so that
 * nothing that merely imports this file pays for it.
 */
function loadMusicMetadata(): MusicMetadata {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  musicMetadata ??= require('music-metadata') as MusicMetadata;
  return musicMetadata;
}

/**
 * Reads the duration of the audio `stream` carries from its container header (music-metadata; a
 * file whose header states none, such as an MP3 without a Xing header, is read to its end and its
 * frames counted). Null when the bytes are no audio music-metadata knows or state no duration.
 * Stops reading once it knows: a caller teeing a stream into it must stop feeding it then.
 */
export async function probeAudio(stream: Readable, hint: { mimeType?: string; size?: number; path?: string } = {}): Promise<AudioProbe | null> {
  const { parseStream } = loadMusicMetadata();
  try {
    const metadata = await parseStream(stream, hint, { duration: true, skipCovers: true });
    const { duration, container, hasAudio } = metadata.format;
    if (duration === undefined || !Number.isFinite(duration) || duration < 0 || hasAudio === false) return null;
    return { durationSeconds: duration, container: container ?? 'unknown' };
  } catch {
    return null;
  }
}
