import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import { natsLivenessCheck, NATS_RECONNECT_OPTIONS } from '../connection-resilience';
import { coalesceNatsWrites } from '../nats-write-coalescing';

export const NATS_CLIENT_OPTIONS = Symbol('NATS_CLIENT_OPTIONS');

/**
 * A NATS connection of its own for a service's `NatsRpcClient` (one with no JetStream connection to
 * share), made on first use: a process that never sends (the key-service admin CLI) never connects.
 */
@Injectable()
export class NatsClientConnection implements OnApplicationShutdown {
  private connection?: NatsConnection;
  private connecting?: Promise<NatsConnection>;

  constructor(@Inject(NATS_CLIENT_OPTIONS) private readonly options: ConnectionOptions) {}

  /** Connects on the first call; every call after resolves to the same connection. */
  ready(): Promise<NatsConnection> {
    this.connecting ??= connect({ noAsyncTraces: true, ...NATS_RECONNECT_OPTIONS, ...this.options }).then(
      (connection) => {
        coalesceNatsWrites(connection);
        natsLivenessCheck('nats-client', connection);
        this.connection = connection;
        return connection;
      },
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }

  get nats(): NatsConnection {
    if (!this.connection) throw new Error('NATS is not connected yet (await ready() first)');
    return this.connection;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection?.drain().catch(() => undefined);
  }
}
