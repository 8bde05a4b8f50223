import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { UsageStream } from '@gateway/contracts';
import { NATS_RECONNECT_OPTIONS, natsLivenessCheck } from './connection-resilience';
import {
  connect,
  createInbox,
  headers as natsHeaders,
  JetStreamClient,
  JetStreamManager,
  type Msg,
  type MsgHdrs,
  NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';

export const JETSTREAM_SERVERS = Symbol('JETSTREAM_SERVERS');

/**
 * A NATS connection for JetStream. On start it makes sure the usage stream exists (idempotent), so
 * publishers (router, edge) and the consumer (metering-service) may start in any order.
 */
@Injectable()
export class JetStreamConnection implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(JetStreamConnection.name);
  private connection?: NatsConnection;
  private manager?: JetStreamManager;
  private client?: JetStreamClient;
  private acked?: AckedPublisher;
  private disconnected = false;

  constructor(@Inject(JETSTREAM_SERVERS) private readonly servers: string[]) {}

  async onModuleInit(): Promise<void> {
    // noAsyncTraces: nats.js would otherwise capture a stack (`new Error()`) for every request it
    // sends, i.e. every JetStream publish; its errors keep their own messages and codes.
    this.connection = await connect({ servers: this.servers, name: 'jetstream', noAsyncTraces: true, ...NATS_RECONNECT_OPTIONS });
    natsLivenessCheck('jetstream', this.connection);
    this.manager = await this.connection.jetstreamManager();
    await this.ensureUsageStream();
    this.client = this.connection.jetstream();
    void this.watchReconnects(this.connection);
  }

  /**
   * A NATS server that comes back without its store (a new pod, an emptied volume) has no usage
   * stream: publishes would fail with no responders until someone creates it again.
   */
  private async watchReconnects(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') this.disconnected = true;
      if (status.type !== 'reconnect') continue;
      this.disconnected = false;
      this.logger.log('NATS reconnected');
      await this.ensureUsageStream().catch((error: Error) => this.logger.warn(`usage stream not ensured after reconnect: ${error.message}`));
    }
  }

  get jetstream(): JetStreamClient {
    if (!this.client) throw new Error('JetStream is not connected yet');
    return this.client;
  }

  /** JetStream publishes for the request path: the same acknowledgement, less machinery (see AckedPublisher). */
  get publisher(): AckedPublisher {
    this.acked ??= new AckedPublisher(this.nats);
    return this.acked;
  }

  /** Connected to a NATS server now (false while it reconnects, and once closed). */
  get connected(): boolean {
    return this.connection !== undefined && !this.disconnected && !this.connection.isClosed();
  }

  get nats(): NatsConnection {
    if (!this.connection) throw new Error('NATS is not connected yet');
    return this.connection;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection?.drain().catch(() => undefined);
  }

  async isReachable(): Promise<boolean> {
    try {
      await this.manager?.streams.info(UsageStream.name);
      return this.manager !== undefined;
    } catch {
      return false;
    }
  }

  /** The sequence of the last usage event published so far. Rejects when JetStream cannot be asked. */
  async lastUsageSequence(): Promise<number> {
    const manager = this.manager;
    if (!manager) throw new Error('JetStream is not connected yet');
    return (await manager.streams.info(UsageStream.name)).state.last_seq;
  }

  /**
   * Whether metering has written every usage event up to `sequence`: its durable consumer's
   * acknowledgement floor reached it (an event is acknowledged once the ledger committed), or
   * nothing is pending at all, or the consumer does not exist (metering never ran on this NATS).
   * Rejects when JetStream cannot be asked.
   */
  async meteringCaughtUp(sequence: number): Promise<boolean> {
    const manager = this.manager;
    if (!manager) throw new Error('JetStream is not connected yet');
    try {
      const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
      return info.ack_floor.stream_seq >= sequence || info.num_pending + info.num_ack_pending === 0;
    } catch (error) {
      if (/consumer not found/i.test((error as Error).message)) return true;
      throw error;
    }
  }

  /** Creates the usage stream unless it exists (idempotent). */
  async ensureUsageStream(): Promise<void> {
    const manager = this.manager;
    if (!manager) throw new Error('JetStream is not connected yet');
    try {
      await manager.streams.info(UsageStream.name);
    } catch {
      // Two services may race to create it; the loser's add fails with "already in use" and that's fine.
      await manager.streams
        .add({
          name: UsageStream.name,
          subjects: [...UsageStream.subjects],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          duplicate_window: 2 * 60 * 1_000_000_000,
        })
        .then(
          () => this.logger.log(`created JetStream stream ${UsageStream.name}`),
          async (error: Error) => {
            await manager.streams.info(UsageStream.name).catch(() => Promise.reject(error));
          },
        );
    }
  }
}

/** What JetStream answers a publish with. */
export interface PublishAck {
  stream: string;
  seq: number;
  /** The message id was seen within the stream's duplicate window: nothing was stored. */
  duplicate?: boolean;
}

/** A publish JetStream refused, or that got no answer in time. */
export class JetStreamPublishError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** nats.js's default JetStream request timeout. */
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * JetStream publish (a NATS request to the stream's subject, answered by a PubAck) without nats.js's
 * per-request objects: `jetstream.publish` builds a request with a timer promise and a deferred, and
 * rejects the deferred with a freshly made `NatsError` (a stack capture) even when the ack arrived.
 * Here: one wildcard reply subscription per connection, made on first use, a map from reply
 * subject to the waiting publish, one timer each; errors are made only for failures. The same
 * headers (`Nats-Msg-Id` from `msgID`), the same acknowledgement, the same errors by code (503
 * no responders, the stream's API errors, `TIMEOUT`).
 */
export class AckedPublisher {
  private prefix?: string;
  private sequence = 0;
  private readonly waiting = new Map<string, { resolve: (ack: PublishAck) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();

  constructor(
    private readonly nats: NatsConnection,
    private readonly timeoutMs = PUBLISH_TIMEOUT_MS,
  ) {}

  publish(subject: string, data: Uint8Array, options: { msgID?: string; headers?: MsgHdrs } = {}): Promise<PublishAck> {
    const headers = options.headers ?? natsHeaders();
    if (options.msgID) headers.set('Nats-Msg-Id', options.msgID);
    const reply = `${this.ensurePrefix()}.${(this.sequence++).toString(36)}`;
    return new Promise<PublishAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(reply);
        reject(new JetStreamPublishError(`JetStream did not acknowledge a publish on ${subject} within ${this.timeoutMs} ms`, 'TIMEOUT'));
      }, this.timeoutMs);
      this.waiting.set(reply, { resolve, reject, timer });
      try {
        this.nats.publish(subject, data, { reply, headers });
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(reply);
        reject(error as Error);
      }
    });
  }

  /** Publishes still waiting for their acknowledgement. */
  get pending(): number {
    return this.waiting.size;
  }

  private ensurePrefix(): string {
    if (this.prefix) return this.prefix;
    const prefix = createInbox();
    this.nats.subscribe(`${prefix}.*`, { callback: (error, message) => error || this.settle(message) });
    this.prefix = prefix;
    return prefix;
  }

  private settle(message: Msg): void {
    const waiting = this.waiting.get(message.subject);
    if (!waiting) return;
    this.waiting.delete(message.subject);
    clearTimeout(waiting.timer);
    if (message.data.length === 0) {
      // A status message: 503 when no stream (or no JetStream) listens on the subject.
      const code = String(message.headers?.code ?? 'UNKNOWN');
      waiting.reject(new JetStreamPublishError(`JetStream publish failed: ${code} ${message.headers?.description ?? ''}`.trim(), code));
      return;
    }
    let answer: Partial<PublishAck> & { error?: { code?: number; err_code?: number; description?: string } };
    try {
      answer = JSON.parse(textDecoder.decode(message.data)) as typeof answer;
    } catch {
      waiting.reject(new JetStreamPublishError('JetStream answered a publish with something other than JSON', 'BAD_ACK'));
      return;
    }
    if (answer.error) {
      waiting.reject(new JetStreamPublishError(answer.error.description ?? 'JetStream refused the publish', String(answer.error.code ?? 'UNKNOWN')));
      return;
    }
    waiting.resolve(answer as PublishAck);
  }
}

const textDecoder = new TextDecoder();
