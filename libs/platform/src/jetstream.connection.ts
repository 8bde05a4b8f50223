import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { UsageStream } from '@gateway/contracts';
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
    this.connection = await connect({ servers: this.servers, name: 'jetstream' });
    this.manager = await this.connection.jetstreamManager();
    await this.ensureUsageStream(this.manager);
    this.client = this.connection.jetstream();
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

  private async ensureUsageStream(manager: JetStreamManager): Promise<void> {
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
