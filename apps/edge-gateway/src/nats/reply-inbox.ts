import { Injectable } from '@nestjs/common';
import { JetStreamConnection } from '@gateway/platform';
import { createInbox, type Msg, type MsgHdrs } from 'nats';

/** One request's replies, until closed. */
export interface ReplyExchange {
  /** Stops routing replies to the handler (later ones are dropped); idempotent. */
  close(): void;
}

/**
 * Request/reply with many replies per request over plain nats.js, without a subscription per
 * request: one wildcard subscription (`<inbox prefix>.*`) per connection, made on first use, and a
 * map from each request's reply subject to its handler. nats.js resubscribes it after a reconnect.
 * Replies to a closed exchange (a late heartbeat after a timeout) find no handler and are dropped.
 */
@Injectable()
export class ReplyInbox {
  private prefix?: string;
  private sequence = 0;
  private readonly handlers = new Map<string, (message: Msg) => void>();

  constructor(private readonly connection: JetStreamConnection) {}

  /** Exchanges open now, for tests and gauges. */
  get open(): number {
    return this.handlers.size;
  }

  /**
   * Publishes `data` on `subject` with a reply subject of its own and hands every reply to
   * `onReply` until the exchange is closed. Throws what nats.js throws on publish (payload over
   * the server's max_payload, connection closed), having registered nothing.
   */
  request(subject: string, data: string | Uint8Array, headers: MsgHdrs | undefined, onReply: (message: Msg) => void): ReplyExchange {
    const nats = this.connection.nats;
    const reply = `${this.ensurePrefix()}.${(this.sequence++).toString(36)}`;
    this.handlers.set(reply, onReply);
    try {
      nats.publish(subject, data, { reply, headers });
    } catch (error) {
      this.handlers.delete(reply);
      throw error;
    }
    return { close: () => void this.handlers.delete(reply) };
  }

  /** A fire-and-forget message on the same connection, so it cannot overtake a request sent before it. */
  publish(subject: string, data: string | Uint8Array): void {
    this.connection.nats.publish(subject, data);
  }

  private ensurePrefix(): string {
    if (this.prefix) return this.prefix;
    const prefix = createInbox();
    this.connection.nats.subscribe(`${prefix}.*`, {
      callback: (error, message) => {
        if (!error) this.handlers.get(message.subject)?.(message);
      },
    });
    this.prefix = prefix;
    return prefix;
  }
}

/** A NATS "no responders" status message: nobody is subscribed to the request's subject. */
export function isNoResponders(message: Msg): boolean {
  return message.data.length === 0 && message.headers?.code === 503;
}
