import { HttpException } from '@nestjs/common';
import { isDependencyUnavailable } from '@gateway/platform';
import { TimeoutError } from 'rxjs';
import type { HttpError } from './error-formats';
import { DomainError, ErrorCode, ErrorStatus, isDomainErrorPayload } from '@gateway/errors';

/** Every failure becomes a status and a message the client may see; null means unexpected (500). */
export function toHttpError(exception: unknown): HttpError | null {
  if (exception instanceof DomainError) {
    return { status: ErrorStatus[exception.code], message: exception.message, code: exception.code, param: exception.param };
  }
  if (isDomainErrorPayload(exception)) {
    if (exception.code === ErrorCode.Internal) return null;
    return { status: ErrorStatus[exception.code], message: exception.message, code: exception.code, param: exception.param };
  }
  if (exception instanceof HttpException) {
    const response = exception.getResponse();
    const message =
      typeof response === 'string'
        ? response
        : typeof (response as { message?: unknown }).message === 'string'
          ? (response as { message: string }).message
          : exception.message;
    const status = exception.getStatus();
    // Fastify's own refusals arrive here (Nest wraps them): a body over BODY_LIMIT_BYTES is a 413.
    return status === 413 ? { status, message, code: ErrorCode.RequestTooLarge } : { status, message };
  }
  if (exception instanceof TimeoutError) {
    return { status: 503, message: 'A gateway service did not answer in time; retry with backoff', code: ErrorCode.ServiceUnavailable };
  }
  if (isNatsPayloadTooLarge(exception)) {
    // The request is forwarded to the services as one NATS message, whose size the NATS server caps
    // (max_payload, 1 MiB by default).
    return {
      status: 413,
      message: "Request too large to forward to the gateway's services: it exceeds the NATS server's max_payload (1 MiB by default)",
      code: 'request_too_large',
    };
  }
  if (isNatsConnectionError(exception) || isDependencyUnavailable(exception)) {
    return { status: 503, message: 'A gateway service is unavailable; retry with backoff', code: ErrorCode.ServiceUnavailable };
  }
  const clientError = clientErrorStatus(exception);
  if (clientError) return { status: clientError, message: (exception as Error).message || 'Bad request' };
  return null;
}

/**
 * The status of a refusal Fastify or one of its plugins raised for the request itself (a static
 * file path that climbs out of its root, a directory asked for as a file): their errors carry a 4xx
 * `statusCode`. Anything else is not the client's doing.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  if (!(exception instanceof Error)) return undefined;
  const status = (exception as { statusCode?: unknown }).statusCode;
  return Number.isInteger(status) && (status as number) >= 400 && (status as number) < 500 ? (status as number) : undefined;
}

/** The request was too large for one NATS message (the server's max_payload). */
export function isNatsPayloadTooLarge(exception: unknown): boolean {
  return typeof exception === 'object' && exception !== null && (exception as { code?: unknown }).code === 'MAX_PAYLOAD_EXCEEDED';
}

/** NATS client failures: no responders, or the connection is down or closed. */
function isNatsConnectionError(exception: unknown): boolean {
  if (typeof exception !== 'object' || exception === null || !('code' in exception)) return false;
  const code = String((exception as { code: unknown }).code);
  return ['503', 'NO_RESPONDERS', 'CONNECTION_CLOSED', 'DISCONNECT', 'CONNECTION_REFUSED', 'CONNECTION_DRAINING'].includes(code);
}
