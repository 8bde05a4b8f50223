/**
 * The responses format answers a failed request with OpenAI's error body (see chat/error-body.ts);
 * in a stream it sends its own `error` event, numbered in the stream's sequence.
 */
import { openaiErrorCode, openaiErrorType } from '../chat/error-body';
import { eventFrame } from '../common/sse';
import { withRequestId, type WireError } from '../common/wire-error';

export function responsesStreamErrorFrame(error: WireError, requestId?: string, sequenceNumber = 0): string {
  const event = {
    type: 'error',
    // The event's `code` is required by the SDK type: the OpenAI type stands in when there is no code.
    code: error.code ?? openaiErrorCode(error.status) ?? openaiErrorType(error.status),
    message: error.message,
    param: error.param || null,
    sequence_number: sequenceNumber,
  };
  return eventFrame('error', withRequestId(event, error.status, requestId));
}
