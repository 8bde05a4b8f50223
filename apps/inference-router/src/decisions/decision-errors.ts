import { openaiErrorBody } from '@gateway/client-formats';
import { wireError } from '../errors/error-reply';
import type { DomainError } from '@gateway/errors';

/**
 * The decision endpoint's error body: the OpenAI body `{error: {message, type, code, param}}`
 * (the spec's "Errors": message, type and code, plus `param` naming the field of a 400), whose
 * `code` is always the decision code. A 429 also carries `error.retry_after` (whole seconds): the
 * router's answer is a NATS frame without headers, so the edge sets the `Retry-After` header from
 * this field.
 */
export interface DecisionErrorBody {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    /** 429 only: seconds to wait before retrying (the edge copies it into `Retry-After`). */
    retry_after?: number;
  };
  /** 5xx only, for support. */
  request_id?: string;
}

export function decisionErrorBody(error: DomainError, requestId: string): DecisionErrorBody {
  const body = openaiErrorBody(wireError(error), requestId) as DecisionErrorBody;
  if (error.retryAfterSeconds !== undefined) body.error.retry_after = error.retryAfterSeconds;
  return body;
}
