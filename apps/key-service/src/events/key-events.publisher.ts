import { Injectable, Logger } from '@nestjs/common';
import { KeyChangeReason, KeysChangedEvent, Rpc } from '@gateway/contracts';
import { NatsClientConnection, NatsRpcClient } from '@gateway/platform';

/**
 * Broadcasts `keys.changed` to every edge replica. Published before the command's reply, so an edge
 * has dropped the cached key before the caller can send its next request.
 */
@Injectable()
export class KeyEventsPublisher {
  private readonly logger = new Logger(KeyEventsPublisher.name);
  private readonly client: NatsRpcClient;

  constructor(private readonly connection: NatsClientConnection) {
    this.client = new NatsRpcClient(connection);
  }

  async keysChanged(accountId: string, keyHashes: string[], reason: KeyChangeReason): Promise<void> {
    const event: KeysChangedEvent = { accountId, keyHashes, reason };
    try {
      await this.connection.ready();
      this.client.emit(Rpc.keysChanged, event);
    } catch (error) {
      // The edge's cache TTL still bounds staleness; the change itself is committed.
      this.logger.error(`could not publish ${Rpc.keysChanged.subject} (${reason}): ${(error as Error).message}`);
    }
  }
}
