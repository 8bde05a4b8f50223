import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { Observable } from 'rxjs';
import { DomainError, ErrorCode } from '@gateway/errors';
import { GracefulShutdown } from './graceful-shutdown';
import { extractNatsTraceContext, gatewayTracer, recordSpanError } from './tracing';

/** A caller's mistake (bad payload, unknown key...) is an answer, not a failure of the handler. */
function isFailure(error: unknown): boolean {
  return !(error instanceof DomainError) || error.code === ErrorCode.Internal;
}

/**
 * Around every NATS handler: continues the caller's trace from the message headers in a server
 * span named after the subject (active while the handler and any stream it returns run), and
 * counts the handler as work in progress until its reply — or its last stream frame — is sent.
 */
@Injectable()
export class RpcObservabilityInterceptor implements NestInterceptor {
  constructor(private readonly shutdown: GracefulShutdown) {}

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'rpc') return next.handle();
    const nats = execution.switchToRpc().getContext<NatsContext | undefined>();
    const subject = typeof nats?.getSubject === 'function' ? nats.getSubject() : 'unknown';
    const parent = extractNatsTraceContext(typeof nats?.getHeaders === 'function' ? nats.getHeaders() : undefined);
    return new Observable((subscriber) => {
      const span = gatewayTracer().startSpan(
        subject,
        { kind: SpanKind.SERVER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject } },
        parent,
      );
      const endWork = this.shutdown.beginWork();
      // Subscribing inside the span's context: the handler, and a stream it returns, run in it.
      const subscription = context.with(trace.setSpan(parent, span), () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            if (isFailure(error)) recordSpanError(span, error);
            subscriber.error(error);
          },
          complete: () => subscriber.complete(),
        }),
      );
      return () => {
        subscription.unsubscribe();
        span.end();
        endWork();
      };
    });
  }
}
