import { CustomTransportStrategy, MessageHandler, NatsContext, Server } from '@nestjs/microservices';
import { RPC_CONTRACTS, RpcContract } from '@gateway/contracts';
import type { ValidateFunction } from 'ajv';
import { connect, type ConnectionOptions, type Msg, type NatsConnection, type Subscription } from 'nats';
import { isObservable, type Observable } from 'rxjs';
import { natsLivenessCheck } from '../connection-resilience';
import { beforeNextWrite, coalesceNatsWrites, heldGrew } from '../nats-write-coalescing';
import { decodeJson, encodeFrame, END_FRAME_JSON, errorFrame, invalidPayload, RawFrame } from './wire';
import { payloadValidator } from './validators';
import { ErrorCode } from '@gateway/errors';

export interface NatsTransportOptions extends ConnectionOptions {
  /** Queue group of the service's handlers, unless their contract says otherwise. */
  queue?: string;
  /**
   * Whether this replica subscribes a subject it has a handler for (all of them when omitted): a
   * replica that does not subscribe never receives the subject's messages, and when no replica
   * does, the NATS server answers its callers "no responders" at once.
   */
  serves?: (subject: string) => boolean;
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
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly options: NatsTransportOptions) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      this.connection = coalesceNatsWrites(await connect({ ...this.options, queue: undefined, serves: undefined } as ConnectionOptions));
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
    const send = (json: string) => {
      if (!to) return;
      try {
        connection.publish(to, json);
      } catch (error) {
        // The connection is closed: the caller's own timeout ends the request there.
        this.logger.warn(`${subject} reply not sent: ${(error as Error).message}`);
      }
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
    if (handler.isEventHandler) {
      void this.handleEvent(subject, { pattern: subject, data: payload }, context).catch((failure: unknown) =>
        this.logger.error(`${subject}: ${String(failure)}`),
      );
      return;
    }
    void (async () => {
      let replies: Observable<unknown>;
      try {
        const result: unknown = await handler(payload, context);
        replies = isObservable(result) ? result : this.transformToObservable(result);
      } catch (failure) {
        return send(JSON.stringify(errorFrame(failure)));
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
          },
          complete: () => {
            release();
            send(END_FRAME_JSON);
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
        error: (failure: unknown) => send(JSON.stringify(errorFrame(failure))),
        complete: () => {
          if (!replied) send('null');
        },
      });
    })();
  }
}
