import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '@gateway/errors';

/** True when an Accept header lists `text/event-stream` with a non-zero quality. Wildcards do not count. */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'text/event-stream') return false;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

/** Video streams answer only clients that say they read them (spec: send `Accept: text/event-stream`). */
@Injectable()
export class AcceptEventStreamGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (acceptsEventStream(request.headers.accept)) return true;
    throw new DomainError(ErrorCode.NotAcceptable, 'This endpoint streams server-sent events: send the header Accept: text/event-stream', 'accept');
  }
}
