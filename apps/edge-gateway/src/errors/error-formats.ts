/**
 * Each route family answers errors in the shape its clients parse:
 * - `/v1/auth/*`: `{detail}` (the spec's proxy-key error body);
 * - `/v1/messages`: Anthropic's `{type: "error", error: {type, message}}`;
 * - everything else: OpenAI's `{error: {message, type, code, param}}`.
 * 5xx bodies also carry the request id, never a stack.
 */
export type ErrorFormat = 'detail' | 'anthropic' | 'openai';

export interface HttpError {
  status: number;
  message: string;
  code?: string;
  param?: string;
}

export function errorFormatFor(url: string): ErrorFormat {
  const path = url.split('?', 1)[0];
  if (path.startsWith('/v1/auth/') || path === '/v1/auth') return 'detail';
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return 'openai';
}

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

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
};

const typeFor = (table: Record<number, string>, status: number, fallback4xx: string, fallback5xx: string): string =>
  table[status] ?? (status < 500 ? fallback4xx : fallback5xx);

export function errorBody(format: ErrorFormat, error: HttpError, requestId: string): Record<string, unknown> {
  const withRequestId = error.status >= 500 ? { request_id: requestId } : {};
  switch (format) {
    case 'detail':
      return { detail: error.message, ...withRequestId };
    case 'anthropic':
      return {
        type: 'error',
        error: { type: typeFor(ANTHROPIC_TYPES, error.status, 'invalid_request_error', 'api_error'), message: error.message },
        ...withRequestId,
      };
    case 'openai':
      return {
        error: {
          message: error.message,
          type: typeFor(OPENAI_TYPES, error.status, 'invalid_request_error', 'server_error'),
          code: error.code ?? null,
          param: error.param ?? null,
        },
        ...withRequestId,
      };
  }
}
