import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Payload } from '@nestjs/microservices';
import { KeyChangeReason, KeysChangedEvent, Rpc } from '@gateway/contracts';
import { AuthCacheService } from './auth-cache.service';
import { ConsoleSessions } from '../console-session/console-sessions';

const ENDS_SESSIONS = new Set<KeyChangeReason>(['proxy_toggled', 'proxy_removed', 'proxy_removed_all']);

/** Subscribed without a queue group: every edge replica hears every key change. A NATS handler, not an HTTP route. */
@ApiExcludeController()
@Controller()
export class KeyEventsController {
  constructor(
    private readonly cache: AuthCacheService,
    private readonly sessions: ConsoleSessions,
  ) {}

  @Handles(Rpc.keysChanged)
  async keysChanged(@Payload() event: KeysChangedEvent): Promise<void> {
    if (typeof event?.accountId !== 'string' || !Array.isArray(event.keyHashes)) return;
    this.cache.invalidate(event);
    // A proxy key switched or removed elsewhere (the admin CLI included) ends its console sessions.
    // Not a regenerated master key: the session that regenerated it follows the new key, and the
    // old one's other sessions are ended by the edge that answered (or at their next call).
    if (ENDS_SESSIONS.has(event.reason)) {
      for (const keyHash of event.keyHashes) await this.sessions.endKey(keyHash).catch(() => undefined);
    }
  }
}
