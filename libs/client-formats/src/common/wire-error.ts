/**
 * A failure as a client format spells it: the HTTP status, the message the caller reads, the
 * machine-readable code (a domain `ErrorCode` or a wire code such as `request_too_large`) and
 * the dotted path of the request field at fault.
 */
export interface WireError {
  status: number;
  message: string;
  code?: string;
  param?: string;
}

/** A 5xx body carries the request id the client should quote to support; other bodies do not. */
export function withRequestId<T extends object>(body: T, status: number, requestId: string | undefined): T & { request_id?: string } {
  return status >= 500 && requestId ? { ...body, request_id: requestId } : body;
}
