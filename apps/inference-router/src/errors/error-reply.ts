import type { ClientFormat, WireError } from '@gateway/client-formats';
import { UpstreamError, upstreamDomainError } from '@gateway/providers';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * Every failure as a `DomainError`: ours as thrown, an upstream one through its single mapping,
 * anything else (a bug) as a bare 500 whose message reveals nothing.
 */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof UpstreamError) return upstreamDomainError(error);
  return new DomainError(ErrorCode.Internal, 'Internal error', undefined, { cause: error });
}

export function wireError(error: DomainError): WireError {
  return { status: error.status, message: error.message, code: error.code, param: error.param };
}

/**
 * A failed call's reply: the error's status and the body of the client's format (a 5xx names the
 * request), and the seconds to wait when the error says (the edge sends them as `Retry-After`).
 */
export function errorReply(
  format: ClientFormat,
  error: DomainError,
  requestId: string,
): { kind: 'json'; status: number; body: Record<string, unknown>; retryAfter?: number } {
  const reply = { kind: 'json' as const, status: error.status, body: format.errorBody(wireError(error), requestId) };
  return error.retryAfterSeconds !== undefined ? { ...reply, retryAfter: error.retryAfterSeconds } : reply;
}
