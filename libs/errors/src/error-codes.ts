/**
 * Domain error codes. Services throw them in a DomainError; over NATS they travel as a
 * DomainErrorPayload, and each transport maps them to a status and to the error body of the route's format.
 */
export enum ErrorCode {
  InvalidRequest = 'invalid_request',
  Unauthenticated = 'unauthenticated',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  NotAcceptable = 'not_acceptable',
  Conflict = 'conflict',
  PlanLimitReached = 'plan_limit_reached',
  AllocationAboveDailyLimit = 'allocation_above_daily_limit',
  InsufficientCredits = 'insufficient_credits',
  AllocationExhausted = 'allocation_exhausted',
  RateLimited = 'rate_limit_exceeded',
  ServiceUnavailable = 'service_unavailable',
  Internal = 'internal_error',
  RequestTooLarge = 'request_too_large',
  /** The upstream provider failed (5xx, a broken stream) or refused the gateway's own credentials. */
  UpstreamFailed = 'upstream_error',
  /** The upstream provider did not answer in time, or could not be reached. */
  UpstreamTimeout = 'upstream_timeout',
  // The decision endpoint's codes (spec, "Errors"): its clients branch on them.
  InvalidBody = 'invalid_body',
  MissingRequiredParameter = 'missing_required_parameter',
  InvalidType = 'invalid_type',
  InvalidValue = 'invalid_value',
  ModelNotSupported = 'model_not_supported',
  ModelVersionNotServed = 'model_version_not_served',
  ContextLengthExceeded = 'context_length_exceeded',
  /** This router already serves as many decision requests as it may. */
  ModelBusy = 'model_busy',
  /** The backing model stayed rate limited after retries and fallbacks. */
  ModelRateLimited = 'rate_limited',
  ModelUnavailable = 'model_unavailable',
}

export const ErrorStatus: Record<ErrorCode, number> = {
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.NotAcceptable]: 406,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.PlanLimitReached]: 403,
  [ErrorCode.AllocationAboveDailyLimit]: 400,
  [ErrorCode.InsufficientCredits]: 402,
  [ErrorCode.AllocationExhausted]: 402,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.ServiceUnavailable]: 503,
  [ErrorCode.Internal]: 500,
  [ErrorCode.RequestTooLarge]: 413,
  [ErrorCode.UpstreamFailed]: 502,
  [ErrorCode.UpstreamTimeout]: 504,
  [ErrorCode.InvalidBody]: 400,
  [ErrorCode.MissingRequiredParameter]: 400,
  [ErrorCode.InvalidType]: 400,
  [ErrorCode.InvalidValue]: 400,
  [ErrorCode.ModelNotSupported]: 400,
  [ErrorCode.ModelVersionNotServed]: 400,
  [ErrorCode.ContextLengthExceeded]: 400,
  [ErrorCode.ModelBusy]: 429,
  [ErrorCode.ModelRateLimited]: 429,
  [ErrorCode.ModelUnavailable]: 503,
};

/** The error object a service's failure carries across NATS. */
export interface DomainErrorPayload {
  code: ErrorCode;
  message: string;
  /** The request field at fault, when there is one. */
  param?: string;
  /** Only when it differs from the code's usual status (`ErrorStatus`), e.g. an upstream 4xx passed through. */
  status?: number;
}

export function isDomainErrorPayload(value: unknown): value is DomainErrorPayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as DomainErrorPayload).code === 'string' &&
    (Object.values(ErrorCode) as string[]).includes((value as DomainErrorPayload).code) &&
    typeof (value as DomainErrorPayload).message === 'string'
  );
}
