import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Payload } from '@nestjs/microservices';
import { KeysChangedEvent, Rpc } from '@gateway/contracts';
import { AuthCacheService } from './auth-cache.service';

/** Subscribed without a queue group: every edge replica hears every key change. A NATS handler, not an HTTP route. */
@ApiExcludeController()
@Controller()
export class KeyEventsController {
  constructor(private readonly cache: AuthCacheService) {}

  @Handles(Rpc.keysChanged)
  keysChanged(@Payload() event: KeysChangedEvent): void {
    if (typeof event?.accountId === 'string' && Array.isArray(event.keyHashes)) this.cache.invalidate(event);
  }
}
