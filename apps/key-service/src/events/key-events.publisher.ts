import { Inject, Injectable, Logger } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { KeyChangeReason, KeysChangedEvent, Subjects } from '@gateway/contracts';
import { lastValueFrom } from 'rxjs';

export const NATS_CLIENT = Symbol('NATS_CLIENT');

/**
 * Broadcasts `keys.changed` to every edge replica. Published before the command's reply, so an edge
 * has dropped the cached key before the caller can send its next request.
 */
@Injectable()
export class KeyEventsPublisher {
  private readonly logger = new Logger(KeyEventsPublisher.name);

  constructor(@Inject(NATS_CLIENT) private readonly nats: ClientProxy) {}

  async keysChanged(accountId: string, keyHashes: string[], reason: KeyChangeReason): Promise<void> {
    const event: KeysChangedEvent = { accountId, keyHashes, reason };
    try {
      await lastValueFrom(this.nats.emit(Subjects.keysChanged, event), { defaultValue: undefined });
    } catch (error) {
      // The edge's cache TTL still bounds staleness; the change itself is committed.
      this.logger.error(`could not publish ${Subjects.keysChanged} (${reason}): ${(error as Error).message}`);
    }
  }
}
