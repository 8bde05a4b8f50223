import { Injectable } from '@nestjs/common';
import { INVALID_KEY_MESSAGE, KeyType, KeyView, maskKey, Principal } from '@gateway/contracts';
import { randomUUID } from 'node:crypto';
import { KeyCryptoService } from '../crypto/key-crypto.service';
import { KeyEventsPublisher } from '../events/key-events.publisher';
import { toKeyView, toPrincipal } from './key-records';
import { KeyBudgets } from './key-budgets';
import { DevPassWindows } from './devpass-windows';
import { KeysRepository } from './keys.repository';
import { DomainError, ErrorCode } from '@gateway/errors';

export const newKeyId = (): string => `key_${randomUUID().replace(/-/g, '')}`;

@Injectable()
export class KeysService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly crypto: KeyCryptoService,
    private readonly events: KeyEventsPublisher,
    private readonly budgets: KeyBudgets,
    private readonly devPassWindows: DevPassWindows,
  ) {}

  async authenticate(keyHash: string): Promise<Principal | null> {
    const key = await this.keys.findByHash(keyHash);
    return key ? toPrincipal(key, this.devPassWindows.byPlan) : null;
  }

  /**
   * The calling key, read afresh (the edge's cached principal may predate a toggle or an update).
   * A key deleted since the edge authenticated it is refused as any unknown key is.
   */
  async view(accountId: string, keyId: string, now?: number): Promise<KeyView> {
    const key = await this.keys.findOwned(accountId, keyId);
    if (!key) throw new DomainError(ErrorCode.Unauthenticated, INVALID_KEY_MESSAGE);
    return toKeyView(key, await this.budgets.of(key, now));
  }

  touch(keyIds: string[], at: number): Promise<void> {
    return this.keys.touch(keyIds, new Date(at * 1000));
  }

  /** Issues a new master key; the old one stops working on every edge before this returns. */
  async regenerateMasterKey(accountId: string): Promise<{ key: string }> {
    const key = this.crypto.generate('master');
    const replaced = await this.keys.replaceMasterKey(accountId, this.newKeyRow(accountId, 'master', key));
    if (replaced === null) throw new DomainError(ErrorCode.NotFound, 'Account not found');
    await this.events.keysChanged(accountId, replaced, 'master_regenerated');
    return { key };
  }

  /** Adds a key of the given type to the account, with the given value or a fresh one. */
  async issueKey(accountId: string, type: Exclude<KeyType, 'proxy'>, value?: string, name?: string): Promise<string> {
    const key = value ?? this.crypto.generate(type);
    await this.keys.insert({ ...this.newKeyRow(accountId, type, key), name: name ?? null });
    return key;
  }

  newKeyRow(accountId: string, type: KeyType, value: string) {
    return { id: newKeyId(), accountId, type, keyHash: this.crypto.hash(value), maskedKey: maskKey(value) };
  }
}
