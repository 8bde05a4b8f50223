import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { UsageStream } from '@gateway/contracts';
import { NATS_RECONNECT_OPTIONS, natsLivenessCheck } from './connection-resilience';
import { connect, JetStreamClient, JetStreamManager, NatsConnection, RetentionPolicy, StorageType } from 'nats';

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
      if (status.type !== 'reconnect') continue;
      this.logger.log('NATS reconnected');
      await this.ensureUsageStream().catch((error: Error) => this.logger.warn(`usage stream not ensured after reconnect: ${error.message}`));
    }
  }

  get jetstream(): JetStreamClient {
    if (!this.client) throw new Error('JetStream is not connected yet');
    return this.client;
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
