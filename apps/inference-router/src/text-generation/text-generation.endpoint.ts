import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DomainErrorPayload, ErrorCode, QueueGroups, Subjects, TEXT_GENERATION_REQUEST_SCHEMA, TextGenerationRequest, TextWireFrame } from '@gateway/contracts';
import {
  context,
  DomainError,
  extractNatsTraceContext,
  gatewayTracer,
  GracefulShutdown,
  JetStreamConnection,
  recordSpanError,
  SpanKind,
  trace,
} from '@gateway/platform';
import Ajv, { type ErrorObject } from 'ajv';
import type { Msg, Subscription } from 'nats';
import { RouterLiveness } from '../liveness/router-liveness';
import { TextGenerationService } from './text-generation.service';

const textDecoder = new TextDecoder();

/** Compiled once: the request's shape, unknown properties dropped (as the class-validator whitelist did). */
const validateRequest = new Ajv({ removeAdditional: 'all', allErrors: false }).compile<TextGenerationRequest>(TEXT_GENERATION_REQUEST_SCHEMA);

/**
 * `inference.text` over plain nats.js (wire protocol: `TextWireFrame` in libs/contracts): one
 * subscription in the router's queue group; each request validated by a compiled JSON schema, run by
 * `TextGenerationService` inside a server span continuing the edge's trace, each frame published to
 * the request's reply subject as it is emitted, then `end` (or `error`). On SIGTERM the subscription
 * is drained first (no new requests; the queue group sends them to other replicas) and the drain
 * waits for the requests in progress (GracefulShutdown work).
 */
@Injectable()
export class TextGenerationEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TextGenerationEndpoint.name);
  private subscription?: Subscription;

  constructor(
    private readonly connection: JetStreamConnection,
    private readonly generation: TextGenerationService,
    private readonly shutdown: GracefulShutdown,
    private readonly liveness: RouterLiveness,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.connection.nats.subscribe(Subjects.inferenceText, {
      queue: QueueGroups['inference-router'],
      callback: (error, message) => {
        if (!error) this.handle(message);
      },
    });
    this.shutdown.onDrain(Subjects.inferenceText, async () => {
      await this.subscription?.drain().catch(() => undefined);
    });
  }

  onApplicationShutdown(): void {
    if (!this.subscription?.isClosed()) this.subscription?.unsubscribe();
  }

  handle(message: Msg): void {
    const to = message.reply;
    if (!to) return;
    let request: unknown;
    try {
      request = JSON.parse(textDecoder.decode(message.data));
    } catch {
      return this.send({ to }, { kind: 'error', error: { code: ErrorCode.InvalidRequest, message: 'The inference.text payload is not JSON' } });
    }
    // An edge of the previous release (Nest's NATS client) wraps the request and expects Nest's
    // replies: served as well, so edges and routers may be updated in any order.
    const reply: ReplyTo = isNestRequest(request) ? { to, nestId: request.id } : { to };
    if (reply.nestId !== undefined) request = (request as NestRequest).data;
    if (!validateRequest(request)) {
      return this.send(reply, { kind: 'error', error: invalidPayload(validateRequest.errors) });
    }
    const parent = extractNatsTraceContext(message.headers);
    const span = gatewayTracer().startSpan(
      Subjects.inferenceText,
      { kind: SpanKind.SERVER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': Subjects.inferenceText } },
      parent,
    );
    const endWork = this.shutdown.beginWork();
    // The first stream frame names this replica, for the edge's liveness probes (heartbeats do too).
    let named = false;
    // Subscribing inside the span's context: the work, and the usage event it publishes, run in it.
    context.with(trace.setSpan(parent, span), () =>
      this.generation.generate(request).subscribe({
        next: (frame) => {
          if (!named && frame.kind === 'sse') {
            named = true;
            frame = { ...frame, router: this.liveness.id };
          }
          this.send(reply, frame);
        },
        error: (error: unknown) => {
          this.send(reply, { kind: 'error', error: this.failure(error, span) });
          span.end();
          endWork();
        },
        complete: () => {
          this.send(reply, { kind: 'end' });
          span.end();
          endWork();
        },
      }),
    );
  }

  private send(reply: ReplyTo, frame: TextWireFrame): void {
    try {
      this.connection.nats.publish(reply.to, JSON.stringify(reply.nestId === undefined ? frame : asNestReply(reply.nestId, frame)));
    } catch (error) {
      // The connection is closed: the edge's silence timeout ends the request there.
      this.logger.warn(`inference.text frame not sent: ${(error as Error).message}`);
    }
  }

  private failure(error: unknown, span: Parameters<typeof recordSpanError>[0]): DomainErrorPayload {
    if (error instanceof DomainError && error.code !== ErrorCode.Internal) return error.toPayload();
    recordSpanError(span, error);
    this.logger.error(`unhandled error on ${Subjects.inferenceText}: ${(error as Error)?.stack ?? String(error)}`);
    return { code: ErrorCode.Internal, message: 'Internal error' };
  }
}

interface ReplyTo {
  to: string;
  /** The request id of a request sent through Nest's NATS client (an edge of the previous release). */
  nestId?: string;
}

/** Nest's NATS client's request envelope. */
interface NestRequest {
  pattern: unknown;
  data: unknown;
  id: string;
}

function isNestRequest(value: unknown): value is NestRequest {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<NestRequest>;
  return candidate.pattern === Subjects.inferenceText && typeof candidate.id === 'string' && 'data' in candidate;
}

/** A frame as Nest's NATS server would have sent it: each value as `response`, then `isDisposed`, or `err`. */
function asNestReply(id: string, frame: TextWireFrame): Record<string, unknown> {
  if (frame.kind === 'end') return { id, isDisposed: true };
  if (frame.kind === 'error') return { id, err: frame.error };
  return { id, response: frame };
}

/** The first schema violation as the spec's error: the field's dotted path in `param`. */
export function invalidPayload(errors: ErrorObject[] | null | undefined): DomainErrorPayload {
  const error = errors?.[0];
  if (!error) return { code: ErrorCode.InvalidRequest, message: 'Invalid inference.text payload' };
  const path = error.instancePath.slice(1).replace(/\//g, '.');
  const missing = error.keyword === 'required' ? String((error.params as { missingProperty?: string }).missingProperty) : undefined;
  const param = missing ? (path ? `${path}.${missing}` : missing) : path;
  const detail =
    error.keyword === 'enum' ? `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : (error.message ?? 'is invalid');
  if (!param) return { code: ErrorCode.InvalidRequest, message: `The inference.text payload ${detail}` };
  return { code: ErrorCode.InvalidRequest, message: missing ? `${param} is required` : `${param} ${detail}`, param };
}
