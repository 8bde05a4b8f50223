import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { UsageStream } from '@gateway/contracts';
import { NATS_RECONNECT_OPTIONS, natsLivenessCheck } from './connection-resilience';
import { coalesceNatsWrites } from './nats-write-coalescing';
import { ensureStream, ReplicaPolicy, replicaPolicy, StreamDefinition } from './jetstream-streams';
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

/** Every usage event, kept without an age limit (the ledger can be rebuilt from it). */
export const USAGE_STREAM: StreamDefinition = {
  name: UsageStream.name,
  subjects: [...UsageStream.subjects],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  // A publisher retries a publish whose acknowledgement was lost with the same message id: within
  // this window JetStream stores it once (the ledger's unique request id covers any later retry).
  duplicate_window: 2 * 60 * 1_000_000_000,
};

/**
 * A NATS connection for JetStream. On start it makes sure the usage stream exists (idempotent), so
 * publishers (router, edge) and the consumer (metering-service) may start in any order. On a NATS
 * cluster the streams it ensures are replicated (see `ensureStream`): checked again after every
 * reconnect, and whenever the cluster's membership changes while one has fewer copies than asked.
 */
@Injectable()
export class JetStreamConnection implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(JetStreamConnection.name);
  private connection?: NatsConnection;
  private manager?: JetStreamManager;
  private client?: JetStreamClient;
  private acked?: AckedPublisher;
  private disconnected = false;
  /** The streams this process ensures, with the replica count each had when last ensured. */
  private readonly streams = new Map<string, { definition: StreamDefinition; replicas: number }>();
  private ensuring = Promise.resolve();
  private readonly disconnectListeners = new Set<() => void>();
  private readonly serverLostListeners = new Set<() => void>();

  constructor(@Inject(JETSTREAM_SERVERS) private readonly servers: string[]) {}

  async onModuleInit(): Promise<void> {
    // noAsyncTraces: nats.js would otherwise capture a stack (`new Error()`) for every request it
    // sends, i.e. every JetStream publish; its errors keep their own messages and codes.
    this.connection = coalesceNatsWrites(await connect({ servers: this.servers, name: 'jetstream', noAsyncTraces: true, ...NATS_RECONNECT_OPTIONS }));
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
    let cluster = new Set(connection.info?.connect_urls ?? []);
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') {
        this.disconnected = true;
        for (const listener of this.disconnectListeners) listener();
      }
      if (status.type === 'update') {
        // The servers tell their clients each change of the cluster's membership (the client URLs
        // of its servers); a server missing from it has left, or died.
        const now = new Set(connection.info?.connect_urls ?? []);
        const left = [...cluster].some((url) => !now.has(url));
        cluster = now;
        if (left) for (const listener of this.serverLostListeners) listener();
        // A server joined or came back: a stream created with fewer copies than asked may get them now.
        this.ensureStreams((kept) => this.policy.scaleUp && kept.replicas < this.policy.replicas);
      }
      if (status.type !== 'reconnect') continue;
      this.disconnected = false;
      this.logger.log(`NATS reconnected (${connection.getServer()})`);
      this.ensureStreams();
    }
  }

  /** Ensures the streams kept (one pass at a time, in the background: statuses keep being followed meanwhile). */
  private ensureStreams(which: (kept: { replicas: number }) => boolean = () => true): void {
    this.ensuring = this.ensuring.then(async () => {
      for (const kept of [...this.streams.values()].filter(which)) {
        await this.ensureStream(kept.definition).catch((error: Error) => this.logger.warn(`stream ${kept.definition.name} not ensured: ${error.message}`));
      }
    });
  }

  /** Copies asked of each stream on the server this connection is on (3 on a cluster, 1 on a lone server). */
  private get policy(): ReplicaPolicy {
    return replicaPolicy(this.connection?.info);
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

  /**
   * Calls `listener` each time the connection loses its NATS server. Messages sent to this process
   * meanwhile are lost (core NATS keeps nothing for a subscriber that is away), so a reply it is
   * waiting for may never come. Returns the function that unregisters it.
   */
  onDisconnect(listener: () => void): () => void {
    this.disconnectListeners.add(listener);
    return () => this.disconnectListeners.delete(listener);
  }

  /**
   * Calls `listener` each time a server of the NATS cluster leaves it (dies, or is cut off), this
   * connection's or another: messages on their way through it were lost, so a request sent just
   * before may never have reached its service. Returns the function that unregisters it.
   */
  onServerLost(listener: () => void): () => void {
    this.serverLostListeners.add(listener);
    return () => this.serverLostListeners.delete(listener);
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

  /** Creates the usage stream unless it exists (idempotent); see `ensureStream`. */
  async ensureUsageStream(): Promise<void> {
    await this.ensureStream(USAGE_STREAM);
  }

  /**
   * Makes sure a stream exists, with three copies on a NATS cluster (`ensureStream` in
   * jetstream-streams.ts), now and again after every reconnect (a server may come back without
   * its store) or cluster change. Rejects when JetStream cannot be asked.
   */
  async ensureStream(definition: StreamDefinition): Promise<void> {
    const manager = this.manager;
    if (!manager) throw new Error('JetStream is not connected yet');
    const kept = this.streams.get(definition.name) ?? { definition, replicas: 0 };
    this.streams.set(definition.name, kept);
    kept.replicas = await ensureStream(manager, definition, this.policy, this.logger);
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
