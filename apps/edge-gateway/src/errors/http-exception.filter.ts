import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorFormatOf } from '../policy/error-format.decorator';
import { errorBody } from './error-formats';
import { toHttpError } from './to-http-error';
import { DomainError } from '@gateway/errors';

/** The one place an HTTP error body is written (Nest filters and Fastify's error handler both call it). */
export function sendError(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const error = toHttpError(exception) ?? { status: 500, message: 'Internal error; quote the request id when reporting it' };
  if (error.status >= 500) {
    const detail = (exception as Error)?.stack ?? JSON.stringify(exception);
    // The route pattern, not the URL: a legacy path carries a proxy key.
    logger.error(`${request.method} ${request.routeOptions.url ?? 'unmatched route'} failed (request ${request.id}): ${detail}`);
  }
  if (reply.sent) return;
  // A limit that says when to come back (a DevPass key's spent token window).
  if (exception instanceof DomainError && exception.retryAfterSeconds !== undefined && !reply.hasHeader('retry-after')) {
    void reply.header('retry-after', String(exception.retryAfterSeconds));
  }
  void reply.status(error.status).send(errorBody(errorFormatOf(request), error, String(request.id)));
}

@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.logger);
  }
}
