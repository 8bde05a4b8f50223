import { anthropicErrorBody, detailErrorBody, openaiErrorBody, type WireError } from '@gateway/client-formats';

/**
 * The error body shapes a route can declare with `@ErrorFormat` (`policy/`): `detail` (the spec's
 * proxy-key body), `anthropic` and `openai`. 5xx bodies also carry the request id, never a stack. The bodies are spelt once, in
 * `@gateway/client-formats`, which the router's replies use too.
 */
export type ErrorFormat = 'detail' | 'anthropic' | 'openai';

export type HttpError = WireError;

const ERROR_BODIES: Record<ErrorFormat, (error: HttpError, requestId: string) => Record<string, unknown>> = {
  detail: detailErrorBody,
  anthropic: anthropicErrorBody,
  openai: openaiErrorBody,
};

/** The `components.schemas` name of each format's body, which the OpenAPI document answers errors with. */
export const ERROR_BODY_SCHEMA: Record<ErrorFormat, 'DetailError' | 'AnthropicError' | 'OpenAIError'> = {
  detail: 'DetailError',
  anthropic: 'AnthropicError',
  openai: 'OpenAIError',
};

export function errorBody(format: ErrorFormat, error: HttpError, requestId: string): Record<string, unknown> {
  return ERROR_BODIES[format](error, requestId);
}
