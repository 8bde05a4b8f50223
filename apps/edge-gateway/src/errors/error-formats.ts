import { anthropicErrorBody, detailErrorBody, openaiErrorBody, type WireError } from '@gateway/client-formats';

/**
 * Each route family answers errors in the shape its clients parse:
 * - `/v1/auth/*`: `{detail}` (the spec's proxy-key error body);
 * - `/v1/messages`: Anthropic's `{type: "error", error: {type, message}}`;
 * - everything else: OpenAI's `{error: {message, type, code, param}}`.
 * 5xx bodies also carry the request id, never a stack. The bodies are spelt once, in
 * `@gateway/client-formats`, which the router's replies use too.
 */
export type ErrorFormat = 'detail' | 'anthropic' | 'openai';

export type HttpError = WireError;

export function errorFormatFor(url: string): ErrorFormat {
  const path = url.split('?', 1)[0];
  if (path.startsWith('/v1/auth/') || path === '/v1/auth') return 'detail';
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return 'openai';
}

const ERROR_BODIES: Record<ErrorFormat, (error: HttpError, requestId: string) => Record<string, unknown>> = {
  detail: detailErrorBody,
  anthropic: anthropicErrorBody,
  openai: openaiErrorBody,
};

export function errorBody(format: ErrorFormat, error: HttpError, requestId: string): Record<string, unknown> {
  return ERROR_BODIES[format](error, requestId);
}
