/**
 * Domain error codes. Services throw them (over NATS as the `code` of an RpcException); each
 * transport's filter maps them to a status and to the error body of the route's format.
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
};

/** The error object carried across NATS inside an RpcException. */
export interface DomainErrorPayload {
  code: ErrorCode;
  message: string;
  /** The request field at fault, when there is one. */
  param?: string;
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
