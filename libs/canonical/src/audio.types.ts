import type { Readable } from 'node:stream';

/** An uploaded file an adapter sends on: opened anew for each attempt (a retry or the next route re-reads it). */
export interface UploadedFile {
  filename: string;
  contentType: string;
  /** Its exact size: multipart bodies are sent with a length. */
  bytes: number;
  open(): Promise<Readable>;
}

export type TranscriptionTask = 'transcribe' | 'translate';
export type TranscriptionFormat = 'json' | 'text' | 'srt' | 'verbose_json' | 'vtt';

/** A transcription (or a translation into English) of one audio file. */
export interface TranscriptionRequest {
  task: TranscriptionTask;
  model: string;
  file: UploadedFile;
  /** Seconds, as the edge read them from the file's header. */
  durationSeconds: number;
  responseFormat: TranscriptionFormat;
  language?: string;
  prompt?: string;
  temperature?: number;
  timestampGranularities?: string[];
  /** Server-sent events `transcript.text.delta` / `transcript.text.done` (transcriptions, `json` or `text`). */
  stream?: boolean;
}

/** What an upstream says a transcription used. */
export type TranscriptionUsage =
  { type: 'tokens'; inputTokens: number; outputTokens: number; raw: Record<string, unknown> } | { type: 'duration'; seconds: number };

export interface TranscriptionResult {
  /** `json` / `verbose_json`: the object; `text` / `srt` / `vtt`: the text. */
  body:
    | { kind: 'json'; value: Record<string, unknown> }
    | { kind: 'text'; text: string }
    /** A stream's events in order, each event's `data` a JSON object with its `type`. */
    | { kind: 'sse'; events: Record<string, unknown>[] };
  /** The upstream's usage, when its answer carried one. */
  usage?: TranscriptionUsage;
}
