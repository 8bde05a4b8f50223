/**
 * OpenAI's error body, `{error: {message, type, code, param}}`, and the chat stream's error frame.
 * The one place that spells an OpenAI error: the responses format, the media endpoints, the
 * decision endpoint and the edge's OpenAI-style routes all build on it, so an `openai` SDK raises
 * its usual typed error (`BadRequestError`, `RateLimitError`, ...) with our message.
 */
import { dataFrame } from '../common/sse';
import { withRequestId, type WireError } from '../common/wire-error';

const OPENAI_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  406: 'invalid_request_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'service_unavailable_error',
};

/** OpenAI's well-known `code` per status; other statuses have none (null), as OpenAI sends. */
const OPENAI_CODES: Record<number, string> = {
  401: 'invalid_api_key',
  402: 'insufficient_quota',
  404: 'not_found',
  429: 'rate_limit_exceeded',
};

export function openaiErrorType(status: number): string {
  return OPENAI_TYPES[status] ?? (status < 500 ? 'invalid_request_error' : 'server_error');
}

export function openaiErrorCode(status: number): string | null {
  return OPENAI_CODES[status] ?? (status >= 500 ? 'server_error' : null);
}

// A type alias rather than an interface, so a body is assignable to Record<string, unknown>.
export type OpenAIErrorBody = {
  error: { message: string; type: string; code: string | null; param: string | null };
  request_id?: string;
};

/** `code` is the error's own code when it has one, else OpenAI's well-known code for the status. */
export function openaiErrorBody(error: WireError, requestId?: string): OpenAIErrorBody {
  const body = {
    error: { message: error.message, type: openaiErrorType(error.status), code: error.code ?? openaiErrorCode(error.status), param: error.param || null },
  };
  return withRequestId(body, error.status, requestId);
}

/** Chat streams are unnamed `data:` events: the error frame is the error body itself. */
export function chatStreamErrorFrame(error: WireError, requestId?: string): string {
  return dataFrame(openaiErrorBody(error, requestId));
}
