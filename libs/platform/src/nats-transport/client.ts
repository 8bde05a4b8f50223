import { EventContract, ReplyOf, RequestContract, RequestOf, StreamContract, type StreamFrame } from '@gateway/contracts';
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { Logger } from '@nestjs/common';
import { TimeoutError } from 'rxjs';
import { traceHeaders } from '../observability/tracing';
import { decodeFrame, isErrorFrame } from './wire';
import { BUNDLE_TOKEN, forEachBundledFrame, withBundleOptIn } from './frame-bundles';
import { ErrorCode } from '@gateway/errors';

/** Something that holds a NATS connection (JetStreamConnection, NatsClientConnection). */
export interface NatsConnectionSource {
  readonly nats: NatsConnection;
}

/** One request's replies, until closed. */
export interface ReplyExchange {
  /** Stops routing replies to the handler (later ones are dropped); idempotent. */
  close(): void;
}

/** Nobody is subscribed to the request's subject (the NATS server's "no responders"). */
export const NO_RESPONDERS = { code: 'NO_RESPONDERS' } as const;

/** A frame as it reaches a stream's handler: the contract's frames (a raw one as its head with its bytes, see `RawFrame`), the end, or an error (the sender's, no responders, or a frame that is neither JSON nor raw). */
export type ReceivedFrame<Reply> = Exclude<StreamFrame<Reply>, { kind: 'error' }> | { kind: 'error'; error: unknown };

const logger = new Logger('NatsRpcClient');

const NOT_JSON = { kind: 'error', error: { code: ErrorCode.Internal, message: 'The service sent a frame that is neither JSON nor a raw frame' } } as const;

/** A reply as a handler gets it: a message's data and headers, or one frame of a bundle (no headers). */
interface ReplyMessage {
  readonly data: Uint8Array;
  readonly headers?: MsgHdrs;
}

/**
 * The client side of the gateway's NATS wire (see `wire.ts`), on plain nats.js: the contract from
 * the `Rpc` table types the payload and the reply. Replies come to one wildcard subscription per
 * connection (`<inbox prefix>.*`, made on first use) and are told apart by the reply subject's
 * last token: no subscription per request. A stream request says it takes bundles
 * (`frame-bundles.ts`): its frames may come with other streams' in one message on
 * `<inbox prefix>._b`, each delivered as if it had come alone. Replies to a closed exchange find
 * no handler and are dropped. Messages go out on one connection, in order: a cancel cannot
 * overtake its request.
 */
export class NatsRpcClient {
  private prefix?: string;
  private sequence = 0;
  /** By the reply subject's last token. */
  private readonly handlers = new Map<string, (reply: ReplyMessage) => void>();

  constructor(private readonly source: NatsConnectionSource) {}

  /** Exchanges open now, for tests and gauges. */
  get open(): number {
    return this.handlers.size;
  }

  /**
   * One reply: resolves with it, rejects with the service's DomainErrorPayload, `NO_RESPONDERS`, a
   * `TimeoutError` after `timeoutMs`, or what nats.js throws on publish (MAX_PAYLOAD_EXCEEDED...).
   */
  request<C extends RequestContract>(contract: C, payload: RequestOf<C>, timeoutMs: number): Promise<ReplyOf<C>> {
    return new Promise<ReplyOf<C>>((resolve, reject) => {
      let exchange: ReplyExchange | undefined;
      const timer = setTimeout(() => {
        exchange?.close();
        reject(new TimeoutError());
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        exchange?.close();
      };
      try {
        exchange = this.exchange(contract.subject, JSON.stringify(payload), (message) => {
          settle();
          const frame = this.frame<ReplyOf<C>>(message);
          if (isErrorFrame(frame)) reject(frame.error);
          else resolve(frame as ReplyOf<C>);
        });
      } catch (error) {
        settle();
        reject(error);
      }
    });
  }

  /**
   * Starts a stream: every frame goes to `onFrame` until the exchange is closed (the caller closes
   * it on the end or error frame, or when it gives up). `payload` may be its JSON already. Throws
   * what nats.js throws on publish (payload over the server's max_payload, connection closed),
   * having registered nothing.
   */
  stream<C extends StreamContract>(contract: C, payload: RequestOf<C> | string, onFrame: (frame: ReceivedFrame<ReplyOf<C>>) => void): ReplyExchange {
    const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
    return this.exchange(contract.subject, data, (message) => onFrame(this.frame<ReplyOf<C>>(message)), true);
  }

  /** A message nobody answers, on the same connection as the requests. Throws when the connection is closed. */
  emit<C extends EventContract>(contract: C, payload: RequestOf<C>): void {
    this.source.nats.publish(contract.subject, JSON.stringify(payload), { headers: traceHeaders() });
  }

  /**
   * A request nobody is meant to answer (a liveness probe): `onReply` hears only the NATS server's
   * "no responders", if it comes.
   */
  probe(contract: RequestContract, onNoResponders: () => void): ReplyExchange {
    return this.exchange(contract.subject, '', (message) => {
      if (isNoResponders(message)) onNoResponders();
    });
  }

  private exchange(subject: string, data: string, onReply: (reply: ReplyMessage) => void, bundled = false): ReplyExchange {
    const nats = this.source.nats;
    const token = (this.sequence++).toString(36);
    const reply = `${this.ensurePrefix(nats)}.${token}`;
    this.handlers.set(token, onReply);
    try {
      nats.publish(subject, data, { reply, headers: bundled ? withBundleOptIn(traceHeaders()) : traceHeaders() });
    } catch (error) {
      this.handlers.delete(token);
      throw error;
    }
    return { close: () => void this.handlers.delete(token) };
  }

  private frame<Reply>(message: ReplyMessage): ReceivedFrame<Reply> {
    if (isNoResponders(message)) return { kind: 'error', error: NO_RESPONDERS };
    try {
      return decodeFrame(message.data) as ReceivedFrame<Reply>;
    } catch {
      return NOT_JSON;
    }
  }

  private ensurePrefix(nats: NatsConnection): string {
    if (this.prefix) return this.prefix;
    const prefix = createInbox();
    const tokenAt = prefix.length + 1;
    nats.subscribe(`${prefix}.*`, {
      callback: (error, message) => {
        if (error) return;
        const token = message.subject.slice(tokenAt);
        if (token !== BUNDLE_TOKEN) return this.handlers.get(token)?.(message);
        try {
          forEachBundledFrame(message.data, (frameToken, frame) => this.handlers.get(frameToken)?.({ data: frame }));
        } catch (failure) {
          // The sender's fault: what follows the bad entry cannot be told apart; those streams end by their silence timeouts.
          logger.error(`A malformed frame bundle on ${message.subject}: ${(failure as Error).message}`);
        }
      },
    });
    this.prefix = prefix;
    return prefix;
  }
}

/** A NATS "no responders" status message: nobody is subscribed to the request's subject. */
export function isNoResponders(message: ReplyMessage | Msg): boolean {
  return message.data.length === 0 && message.headers?.code === 503;
}
