/**
 * OpenAI's error body, `{error: {message, type, code, param}}`, and the chat stream's error frame.
 * The one place that spells an OpenAI error: the responses format, the media endpoints, the
 * decision endpoint and the edge's OpenAI-style routes all build on it, so an `openai` SDK raises
 * its usual typed error (`BadRequestError`, `RateLimitError`, ...) with our message.
 */
import { type Static, Type } from 'typebox';
import { Nullable } from '../common/schema';
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

/** 5xx only: the request id to quote; every format's error body may carry it. */
export const RequestIdField = Type.Optional(Type.String({ description: '5xx only: quote it when reporting the failure.', example: 'req_0f3c…' }));

export const OpenAIErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String({ description: 'What went wrong, naming the field at fault.' }),
      type: Type.String({ description: 'Error class, e.g. `invalid_request_error`, `authentication_error`, `rate_limit_error`.' }),
      code: Nullable(Type.String(), { description: 'Machine-readable code, e.g. `model_not_supported`; may be null.' }),
      param: Nullable(Type.String(), { description: 'The offending request field as a dotted path, e.g. `messages.0.role`.' }),
      retry_after: Type.Optional(Type.Integer({ description: 'Decisions, 429 only: seconds to wait (also sent as `Retry-After`).' })),
    }),
    request_id: RequestIdField,
  },
  { description: 'Error body of the OpenAI-style routes and of decisions.' },
);
export type OpenAIErrorBody = Static<typeof OpenAIErrorBody>;

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
