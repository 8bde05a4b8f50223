/**
 * Anthropic's error body, `{type: "error", error: {type, message}}`, and the messages stream's
 * `event: error` frame: the one place that spells an Anthropic error, so `@anthropic-ai/sdk`
 * raises its usual typed error (`RateLimitError`, `OverloadedError`, ...) with our message.
 */
import { type Static, Type } from 'typebox';
import { RequestIdField } from '../chat/error-body';
import { Literals } from '../common/schema';
import { eventFrame } from '../common/sse';
import { withRequestId, type WireError } from '../common/wire-error';

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  // Anthropic's own overload status; a 503 (ours: a service unavailable) is an ordinary api_error.
  529: 'overloaded_error',
};

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPES[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

export const AnthropicErrorBody = Type.Object(
  {
    type: Literals(['error']),
    error: Type.Object({
      type: Type.String({ description: 'Error class, e.g. `invalid_request_error`, `authentication_error`, `overloaded_error`.' }),
      message: Type.String(),
    }),
    request_id: RequestIdField,
  },
  { description: 'Error body of `/v1/messages`.' },
);
export type AnthropicErrorBody = Static<typeof AnthropicErrorBody>;

/** Anthropic bodies carry neither `code` nor `param`. */
export function anthropicErrorBody(error: WireError, requestId?: string): AnthropicErrorBody {
  return withRequestId({ type: 'error' as const, error: { type: anthropicErrorType(error.status), message: error.message } }, error.status, requestId);
}

export function messagesStreamErrorFrame(error: WireError, requestId?: string): string {
  return eventFrame('error', anthropicErrorBody(error, requestId));
}
