/**
 * Streaming replies: one encoder per client format, created per request.
 */
import type { ClientFormat } from '../canonical/canonical.types';
import { errorBody } from './error-bodies';
import type { RenderContext } from './render-common';
import { dataFrame, eventFrame } from './sse';
import { ChatStreamEncoder } from './stream-chat';
import type { StreamEncoder } from './stream-encoder';
import { MessagesStreamEncoder } from './stream-messages';
import { encodeResponsesError, ResponsesStreamEncoder } from './stream-responses';

export type { StreamEncoder } from './stream-encoder';
export type { RenderContext } from './render-common';
export { ChatStreamEncoder, MessagesStreamEncoder, ResponsesStreamEncoder };

export function createStreamEncoder(format: ClientFormat, context: RenderContext): StreamEncoder {
  switch (format) {
    case 'chat':
      return new ChatStreamEncoder(context);
    case 'responses':
      return new ResponsesStreamEncoder(context);
    case 'messages':
      return new MessagesStreamEncoder(context);
  }
}

/**
 * An in-stream error frame for a stream that already started (headers sent, so no HTTP status can
 * be set). Prefer the encoder's own `error()` for the responses format: it continues the stream's
 * `sequence_number`, which this function can only take as an argument.
 */
export function encodeStreamError(format: ClientFormat, status: number, message: string, sequenceNumber = 0): string {
  switch (format) {
    case 'chat':
      return dataFrame(errorBody('chat', status, message));
    case 'responses':
      return encodeResponsesError(status, message, sequenceNumber);
    case 'messages':
      return eventFrame('error', errorBody('messages', status, message));
  }
}
