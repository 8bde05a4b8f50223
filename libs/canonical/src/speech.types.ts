/** A speech call as the adapters see it: validated, the model and the voice resolved. */
export interface SpeechCall {
  /** The public model id. */
  model: string;
  input: string;
  /** A voice name, or a custom voice of the upstream. */
  voice: string | { id: string };
  instructions?: string;
  /** `mp3`, `opus`, `aac`, `flac`, `wav` or `pcm`. */
  format: string;
  speed: number;
  /** Whether the client set `speed` (the openai adapter sends only what was set). */
  speedSet: boolean;
  /** The client's `stream_format`, when it set one (the openai adapter asks the upstream for the same). */
  streamFormat?: 'audio' | 'sse';
}

/** What a speech call yields, in order: audio bytes as they come, and the upstream's token usage when it reports one. */
export type SpeechEvent = { kind: 'audio'; bytes: Buffer } | { kind: 'usage'; inputTokens: number; outputTokens: number };

export interface SpeechStream {
  /** The audio's content type (`audio/mpeg`, `audio/wav`, ...). */
  contentType: string;
  events: AsyncIterable<SpeechEvent>;
}
