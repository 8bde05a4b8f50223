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
    /**
     * `stream: true`: the events as the upstream sends them, each a JSON object with its `type`
     * (`transcript.text.delta`, then `transcript.text.done` with the usage, when it reports one).
     */
    | { kind: 'events'; events: AsyncIterable<Record<string, unknown>> };
  /** The upstream's usage, when its answer carried one (a stream's is in its `transcript.text.done`). */
  usage?: TranscriptionUsage;
}
