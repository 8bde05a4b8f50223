import { ArgumentMetadata, ArgumentsHost, Catch, Logger, RpcExceptionFilter, ValidationPipe } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { getMetadataStorage } from 'class-validator';
import { Observable, throwError } from 'rxjs';
import { isDependencyUnavailable } from './connection-resilience';
import { DomainError, DomainErrorPayload, ErrorCode } from '@gateway/errors';
import { firstFieldProblem } from './validation-errors';

const BODY_PARAM_TYPES = new Set(['body', 'payload']);

/**
 * Validates HTTP bodies and NATS payloads with the same DTO classes. A failure is a DomainError
 * naming the first offending field; a body that is not a JSON object is refused as such.
 */
export class DtoValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      transform: true,
      forbidUnknownValues: true,
      exceptionFactory: (errors) => {
        const problem = firstFieldProblem(errors);
        return new DomainError(ErrorCode.InvalidRequest, problem?.message ?? 'Invalid request body', problem?.param);
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const validatesClass = typeof metadata.metatype === 'function' && !PRIMITIVES.has(metadata.metatype as never);
    if (validatesClass && BODY_PARAM_TYPES.has(metadata.type)) {
      if (value === undefined || value === null || value === '') value = {};
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new DomainError(ErrorCode.InvalidRequest, 'Request body must be a JSON object');
      }
      value = onlyDeclaredProperties(value as Record<string, unknown>, metadata.metatype as new () => object);
    }
    return super.transform(value, metadata);
  }
}

const declaredProperties = new WeakMap<object, Set<string>>();

/**
 * The body without the properties its class declares no rule for. `whitelist` would strip them
 * after class-transformer had copied them, value by value: megabytes of unknown fields cost
 * seconds of the event loop that way, and nothing here.
 */
function onlyDeclaredProperties(body: Record<string, unknown>, metatype: new () => object): Record<string, unknown> {
  let declared = declaredProperties.get(metatype);
  if (!declared) {
    declared = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(metatype, '', true, false)
        .map((rule) => rule.propertyName),
    );
    declaredProperties.set(metatype, declared);
  }
  if (declared.size === 0) return body;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (declared.has(key)) kept[key] = body[key];
  return kept;
}

const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object]);

/**
 * Every failure leaves a message handler as a DomainErrorPayload. Unexpected errors are logged here
 * and cross the wire without their message or stack.
 */
@Catch()
export class RpcDomainExceptionFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('RpcExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): Observable<never> {
    let payload: DomainErrorPayload;
    if (exception instanceof DomainError) {
      payload = exception.toPayload();
    } else if (exception instanceof RpcException && typeof exception.getError() === 'object') {
      payload = exception.getError() as DomainErrorPayload;
    } else if (isDependencyUnavailable(exception)) {
      // PostgreSQL (or another back-end) is down: the caller answers 503 and the client retries.
      const pattern = host.getArgByIndex(1)?.getSubject?.() ?? 'unknown subject';
      this.logger.warn(`${pattern}: a back-end is unavailable: ${(exception as Error)?.message ?? String(exception)}`);
      payload = { code: ErrorCode.ServiceUnavailable, message: 'A gateway back-end is unavailable; retry with backoff' };
    } else {
      const pattern = host.getArgByIndex(1)?.getSubject?.() ?? 'unknown subject';
      this.logger.error(`unhandled error on ${pattern}: ${(exception as Error)?.stack ?? String(exception)}`);
      payload = { code: ErrorCode.Internal, message: 'Internal error' };
    }
    return throwError(() => payload);
  }
}
