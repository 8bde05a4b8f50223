import type { CanonicalStreamEvent } from '@gateway/canonical';
import type { WireError } from './wire-error';

/**
 * Turns one reply's canonical stream events into SSE frames of a client format. Each returned
 * string is one complete frame (ending in a blank line), to be written as is.
 */
export interface StreamEncoder {
  /** Frames for one event; may be none (e.g. excluded reasoning, usage held until the end). */
  encode(event: CanonicalStreamEvent): string[];
  /** Closing frames once the upstream stream has ended (`[DONE]`, `response.completed`, `message_stop`). */
  finish(): string[];
  /** The in-stream error frame that ends the stream (numbered in sequence for the responses format). */
  error(error: WireError, requestId?: string): string[];
  /**
   * The whole reply the stream amounted to, once its terminal frame has been encoded (responses: the
   * `response` of `response.completed` / `response.incomplete`), for formats whose replies are stored.
   */
  finalResponse?(): Record<string, unknown> | undefined;
}
