/**
 * Error bodies in each client format, so an SDK raises its normal typed error (`openai`'s
 * `BadRequestError`, `@anthropic-ai/sdk`'s `RateLimitError`, ...) with our message.
 */
import type { ClientFormat } from '../canonical/canonical.types';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** Anthropic's error-type names, used by all three formats (OpenAI clients read `code`, not `type`). */
export function errorType(status: number): ErrorType {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** OpenAI's machine-readable `code` where OpenAI has a well-known one, else null as OpenAI sends. */
export function openaiErrorCode(status: number): string | null {
  switch (status) {
    case 401:
      return 'invalid_api_key';
    case 402:
      return 'insufficient_quota';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limit_exceeded';
    default:
      return status >= 500 ? 'server_error' : null;
  }
}

// Type aliases rather than interfaces so a body is assignable to Record<string, unknown>
// (callers add fields such as `request_id`).
export type OpenAIErrorBody = {
  error: { message: string; type: ErrorType; code: string | null; param: string | null };
};

export type AnthropicErrorBody = {
  type: 'error';
  error: { type: ErrorType; message: string };
};

/** A 5xx body with the request id the client should quote; other bodies unchanged. */
export function withRequestId<T extends object>(body: T, status: number, requestId: string | undefined): T & { request_id?: string } {
  return status >= 500 && requestId ? { ...body, request_id: requestId } : body;
}

/** The JSON body of a failed request. `param` (dotted field path) is only carried by OpenAI bodies. */
export function errorBody(format: ClientFormat, status: number, message: string, param?: string): OpenAIErrorBody | AnthropicErrorBody {
  if (format === 'messages') return { type: 'error', error: { type: errorType(status), message } };
  return { error: { message, type: errorType(status), code: openaiErrorCode(status), param: param || null } };
}
