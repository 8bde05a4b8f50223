import { errorType, type ErrorType } from '../client-formats/error-bodies';

/**
 * The decision endpoint's error body: `{error: {message, type, code, param}}` (the spec's
 * "Errors": message, type and code, plus `param` naming the field of a 400). A 429 also carries
 * `error.retry_after` (whole seconds): the router's answer is a NATS frame without headers, so
 * the edge sets the `Retry-After` header from this field.
 */
export interface DecisionErrorBody {
  error: {
    message: string;
    type: ErrorType;
    code: string;
    param: string | null;
    /** 429 only: seconds to wait before retrying (the edge copies it into `Retry-After`). */
    retry_after?: number;
  };
  /** 5xx only, for support. */
  request_id?: string;
}

export function decisionErrorBody(status: number, message: string, code: string, param?: string, retryAfterSeconds?: number): DecisionErrorBody {
  const error: DecisionErrorBody['error'] = { message, type: errorType(status), code, param: param ?? null };
  if (retryAfterSeconds !== undefined) error.retry_after = retryAfterSeconds;
  return { error };
}
