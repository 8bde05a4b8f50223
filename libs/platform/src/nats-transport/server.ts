import { CustomTransportStrategy, MessageHandler, NatsContext, Server } from '@nestjs/microservices';
import { RPC_CONTRACTS, RpcContract } from '@gateway/contracts';
import type { ValidateFunction } from 'ajv';
import { connect, type ConnectionOptions, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import { context as otelContext, SpanKind, trace } from '@opentelemetry/api';
import { isObservable, type Observable } from 'rxjs';
import { natsLivenessCheck } from '../connection-resilience';
import { beforeNextWrite, coalesceNatsWrites, heldGrew } from '../nats-write-coalescing';
import { decodeJson, encodeFrame, END_FRAME_JSON, errorFrame, invalidPayload, RawFrame } from './wire';
import { payloadValidator } from './validators';
import { FrameBundler, takesBundles } from './frame-bundles';
import { ErrorCode, isDomainErrorPayload } from '@gateway/errors';
import { extractNatsTraceContext, gatewayTracer, recordSpanError } from '../observability/tracing';

export interface NatsTransportOptions extends ConnectionOptions {
  /** Queue group of the service's handlers, unless their contract says otherwise. */
  queue?: string;
  /**
   * Whether this replica subscribes a subject it has a handler for (all of them when omitted): a
   * replica that does not subscribe never receives the subject's messages, and when no replica
   * does, the NATS server answers its callers "no responders" at once.
   */
  serves?: (subject: string) => boolean;
  /**
   * Traces and counts what the handlers do: each message handled in a server span (the caller's
   * trace continued) and counted as work in progress (`beginWork`, the service's GracefulShutdown)
   * until its reply, or its stream's last frame, is sent.
   */
  observability?: { beginWork(): () => void };
}

/** A caller's mistake (bad payload, unknown key...) is an answer, not a failure of the handler: an unexpected error, or a back-end that is down, is. */
function isFailure(failure: unknown): boolean {
  return !isDomainErrorPayload(failure) || failure.code === ErrorCode.Internal || failure.code === ErrorCode.ServiceUnavailable;
}

const contractsBySubject = new Map<string, RpcContract>(RPC_CONTRACTS.map((contract) => [contract.subject, contract]));

const disconnectListeners = new Set<() => void>();

/**
 * Calls `listener` each time a transport server's connection loses its NATS server (one in a cluster
 * killed, or the network cut). The replies and stream frames it published just before may never
 * have arrived: core NATS keeps nothing, and nats.js resubscribes on another server as if nothing
 * happened. A service whose callers must learn that (the router, see its RouterLiveness) listens
 * here. Returns the function that unregisters it.
 */
export function onTransportDisconnect(listener: () => void): () => void {
  disconnectListeners.add(listener);
  return () => disconnectListeners.delete(listener);
}

/**
 * Nest's server side of the gateway's NATS wire (see `wire.ts`), on plain nats.js: handlers stay
 * `@MessagePattern`/`@EventPattern` (named through the `Rpc` table), every payload is validated by
 * its contract's compiled schema before the handler runs, and the replies are the contract's JSON
 * without Nest's envelope. Its subscriptions can be drained on their own before the connection
 * closes: a replica that is shutting down takes no new requests (the queue group sends them to the
 * other replicas) while the replies of the requests it is still serving keep flowing.
 */
export class NatsTransportServer extends Server implements CustomTransportStrategy {
  private connection?: NatsConnection;
  private bundler?: FrameBundler;
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly options: NatsTransportOptions) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      const connection = coalesceNatsWrites(
        await connect({ ...this.options, queue: undefined, serves: undefined, observability: undefined } as ConnectionOptions),
      );
      this.connection = connection;
      this.bundler = new FrameBundler(connection, (subject, data) => this.publish(connection, subject, data));
      natsLivenessCheck('nats', this.connection);
      void this.watchDisconnects(this.connection);
      const serves = this.options.serves ?? (() => true);
      for (const [subject, handler] of this.messageHandlers) if (serves(subject)) this.subscribe(this.connection, subject, handler);
      callback();
    } catch (error) {
      callback(error);
    }
  }

  private async watchDisconnects(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') for (const listener of disconnectListeners) listener();
    }
  }

  /** Stops taking messages; those already received are still handled. */
  async stopListening(): Promise<void> {
    const subscriptions = this.subscriptions.splice(0);
    await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
  }

  async close(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
    this.bundler = undefined;
  }

  private publish(connection: NatsConnection, to: string, data: string): void {
    try {
      connection.publish(to, data);
    } catch (error) {
      // The connection is closed: the caller's own timeout ends the request there.
      this.logger.warn(`reply to ${to} not sent: ${(error as Error).message}`);
    }
  }

  on(): never {
    throw new Error('NatsTransportServer has no events to listen to');
  }

  unwrap<T>(): T {
    if (!this.connection) throw new Error('NatsTransportServer is not connected');
    return this.connection as T;
  }

  private subscribe(connection: NatsConnection, subject: string, handler: MessageHandler): void {
    const contract = contractsBySubject.get(subject);
    const queue = contract?.queue === false ? undefined : (contract?.queue ?? (handler.extras?.queue as string | undefined) ?? this.options.queue);
    const validate = payloadValidator(contract);
    const stream = contract?.kind === 'stream';
    this.subscriptions.push(
      connection.subscribe(subject, {
        queue,
        callback: (error, message) => {
          if (!error) this.handle(connection, subject, handler, message, validate, stream);
        },
      }),
    );
  }

  private handle(
    connection: NatsConnection,
    subject: string,
    handler: MessageHandler,
    message: Msg,
    validate: ValidateFunction | undefined,
    stream: boolean,
  ): void {
    const to = handler.isEventHandler ? undefined : message.reply;
    // A stream whose caller takes bundles (`frame-bundles.ts`) sends every frame, in order, in the
    // bundle its caller's frames share this turn.
    const bundled = to && stream && takesBundles(message.headers) ? this.bundler?.senderTo(to) : undefined;
    const send = (data: string) => {
      if (!to) return;
      if (bundled) bundled(data);
      else this.publish(connection, to, data);
    };
    let payload: unknown;
    try {
      payload = decodeJson(message.data);
    } catch {
      return send(JSON.stringify(errorFrame({ code: ErrorCode.InvalidRequest, message: `The ${subject} payload is not JSON` })));
    }
    if (validate && !validate(payload)) {
      if (!to) return this.logger.warn(`${subject}: invalid event dropped: ${JSON.stringify(invalidPayload(subject, validate.errors))}`);
      return send(JSON.stringify({ kind: 'error', error: invalidPayload(subject, validate.errors) }));
    }
    const context = new NatsContext([message.subject, message.headers]);
    this.observed(subject, message.headers, (finish) => this.run(connection, subject, handler, payload, context, stream, send, finish));
  }

  /**
   * Runs `run` in the message's server span (named after the subject, continuing the caller's trace
   * from its headers; active while the handler and any stream it returns run) and counted as work in
   * progress until `run` calls `finish` (with the failure, if the handler failed), when the server
   * has `observability`; as it is otherwise. Done here rather than by a Nest interceptor: one adds
   * five rxjs subscribers (Nest's interceptor chain) between a stream and the wire, per frame.
   */
  private observed(subject: string, headers: MsgHdrs | undefined, run: (finish: (failure?: unknown) => void) => void): void {
    const observability = this.options.observability;
    if (!observability) return run(() => undefined);
    const parent = extractNatsTraceContext(headers);
    const span = gatewayTracer().startSpan(
      subject,
      { kind: SpanKind.SERVER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject } },
      parent,
    );
    const endWork = observability.beginWork();
    let finished = false;
    const finish = (failure?: unknown) => {
      if (finished) return;
      finished = true;
      if (failure !== undefined && isFailure(failure))
        recordSpanError(span, isDomainErrorPayload(failure) ? new Error(`${failure.code}: ${failure.message}`) : failure);
      span.end();
      endWork();
    };
    otelContext.with(trace.setSpan(parent, span), () => run(finish));
  }

  private run(
    connection: NatsConnection,
    subject: string,
    handler: MessageHandler,
    payload: unknown,
    context: NatsContext,
    stream: boolean,
    send: (data: string) => void,
    finish: (failure?: unknown) => void,
  ): void {
    if (handler.isEventHandler) {
      void this.handleEvent(subject, { pattern: subject, data: payload }, context).then(
        () => finish(),
        (failure: unknown) => {
          finish(failure);
          this.logger.error(`${subject}: ${String(failure)}`);
        },
      );
      return;
    }
    void (async () => {
      let replies: Observable<unknown>;
      try {
        const result: unknown = await handler(payload, context);
        replies = isObservable(result) ? result : this.transformToObservable(result);
      } catch (failure) {
        send(JSON.stringify(errorFrame(failure)));
        return finish(failure);
      }
      if (stream) {
        // A raw frame waits for the connection's next write (this turn's, or sooner once 32 KiB are
        // held and buffered: `beforeNextWrite`), joined by the raw frames that follow it until then
        // (`RawFrame.joinedWith`): the events of one upstream read leave as one message, with no
        // delay the coalesced write did not already have. Any other frame sends what is held
        // first, so the order is kept.
        let held: RawFrame | undefined;
        const release = () => {
          const frame = held;
          held = undefined;
          if (frame) send(encodeFrame(frame));
        };
        replies.subscribe({
          next: (frame) => {
            if (!(frame instanceof RawFrame)) {
              release();
              return send(encodeFrame(frame));
            }
            const joined = held?.joinedWith(frame);
            if (joined) {
              held = joined;
              return heldGrew(connection, frame.body.length);
            }
            release();
            held = frame;
            if (!beforeNextWrite(connection, release, frame.body.length)) release();
          },
          error: (failure: unknown) => {
            release();
            send(JSON.stringify(errorFrame(failure)));
            finish(failure);
          },
          complete: () => {
            release();
            send(END_FRAME_JSON);
            finish();
          },
        });
        return;
      }
      let replied = false;
      replies.subscribe({
        next: (reply) => {
          if (!replied) send(JSON.stringify(reply ?? null));
          replied = true;
        },
        error: (failure: unknown) => {
          send(JSON.stringify(errorFrame(failure)));
          finish(failure);
        },
        complete: () => {
          if (!replied) send('null');
          finish();
        },
      });
    })();
  }
}
