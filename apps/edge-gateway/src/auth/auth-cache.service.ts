import { Inject, Injectable } from '@nestjs/common';
import { AuthenticateKeyRequest, KeysChangedEvent, Principal, Rpc } from '@gateway/contracts';
import { createHash } from 'node:crypto';
import { ServiceClient } from '../nats/service-client';
import { IpAllowlist } from './ip-allowlist';
import { RevocationEpochs } from './revocation-epochs';
import { EdgeEnv } from '../config/edge.env';

export interface Authenticated {
  principal: Principal;
  ipAllowlist: IpAllowlist;
  /**
   * Set on an answer from the cache: the account's revocation epoch it was filled under, which the
   * request's rate-limit script compares with the current one (a difference: `reauthenticate`).
   * Unset on an answer fresh from key-service.
   */
  epoch?: string;
}

interface Entry {
  value: Authenticated;
  accountId: string;
  /** The account's revocation epoch read before key-service was asked (nothing is cached without one). */
  epoch: string;
  expiresAt: number;
}

const EMPTY_ALLOWLIST = new IpAllowlist([]);

/**
 * key SHA-256 → principal, in memory on each edge replica. A miss asks key-service once (concurrent
 * misses for one key share the call). A hit is trusted only while the account's revocation epoch
 * (`RevocationEpochs`) is the one it was filled under: the hit carries that epoch, and the request's
 * one Redis script (rate limit, reservation) compares it and answers 'stale' having changed nothing,
 * upon which the guard calls `reauthenticate`. A key change answered on any replica is thus seen by
 * the next request on every replica, with no round trip of its own. `keys.changed` drops the account's entries
 * early; the TTL bounds staleness of changes made outside the API (the admin CLI) if an event is lost.
 *
 * Only valid keys are cached. A key key-service does not know is asked about every time, and its
 * account is forgotten: a revoked key then takes exactly the path of one never issued (no cache hit,
 * no epoch read), so the time of a 401 does not tell a once-valid key from a random one. (A cache of
 * refusals never held a flood back anyway: a flood of distinct random keys misses it.)
 */
@Injectable()
export class AuthCacheService {
  private readonly entries = new Map<string, Entry>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Promise<Authenticated | null>>();
  private readonly accountOfKey = new Map<string, string>();
  /** Bumped by every key-change event; an answer fetched across a bump is not cached. */
  private generation = 0;
  /** Told the account of every key change this edge hears of (long-lived connections check their key again). */
  private readonly changeListeners = new Set<(accountId: string) => void>();

  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly services: ServiceClient,
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'AUTH_CACHE_TTL_SECONDS' | 'AUTH_CACHE_MAX_ENTRIES'>,
    private readonly epochs: RevocationEpochs,
  ) {
    this.ttlMs = env.AUTH_CACHE_TTL_SECONDS * 1000;
    this.maxEntries = env.AUTH_CACHE_MAX_ENTRIES;
  }

  static hash(key: string): string {
    return createHash('sha256').update(key).digest('hex');
  }

  /** The cached answer (its `epoch` still to be checked by the caller), else key-service's. */
  authenticate(key: string): Promise<Authenticated | null> {
    const keyHash = AuthCacheService.hash(key);
    const cached = this.entries.get(keyHash);
    if (cached && cached.expiresAt > Date.now()) return Promise.resolve(cached.value);
    return this.fetchShared(keyHash);
  }

  /** Whether the account's epoch moved since an entry filled under `epoch` (false when Redis cannot tell). */
  async changedSince(accountId: string, epoch: string): Promise<boolean> {
    const current = await this.epochs.current(accountId).catch(() => undefined);
    return current !== undefined && current !== epoch;
  }

  /** The account's epoch moved since `key`'s entry was filled: its entry is dropped and key-service asked again. */
  reauthenticate(key: string): Promise<Authenticated | null> {
    const keyHash = AuthCacheService.hash(key);
    this.drop(keyHash);
    // A call already in flight may have been asked before the change: this one asks after it.
    this.inFlight.delete(keyHash);
    return this.fetchShared(keyHash);
  }

  private fetchShared(keyHash: string): Promise<Authenticated | null> {
    let pending = this.inFlight.get(keyHash);
    if (!pending) {
      pending = this.fetch(keyHash).finally(() => this.inFlight.delete(keyHash));
      this.inFlight.set(keyHash, pending);
    }
    return pending;
  }

  invalidate(event: KeysChangedEvent): void {
    this.forget(event.accountId, event.keyHashes);
  }

  /**
   * After this edge relayed a change to the account's keys, before it answers: every replica's next
   * request sees the change (the epoch), this one's at once (its own entries are dropped). Throws
   * when Redis is unreachable: the caller answers 503 rather than claim a barrier it did not set.
   */
  async forgetAccount(accountId: string): Promise<void> {
    this.forget(accountId, []);
    await this.epochs.bump(accountId);
  }

  /** Calls `listener` with the account of every key change this edge hears of; returns the unsubscribe. */
  onAccountChange(listener: (accountId: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private forget(accountId: string, keyHashes: string[]): void {
    this.generation++;
    for (const keyHash of keyHashes) this.drop(keyHash);
    for (const keyHash of this.byAccount.get(accountId) ?? []) this.drop(keyHash);
    this.byAccount.delete(accountId);
    // A request already in flight may carry the old answer; it must not be reused.
    this.inFlight.clear();
    for (const listener of this.changeListeners) listener(accountId);
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(keyHash: string): Promise<Authenticated | null> {
    const generation = this.generation;
    // The epoch is read before key-service is asked: an answer fetched across a bump is then stored
    // under the old epoch, and the next hit sees the difference. A key seen for the first time has
    // no known account: its answer is returned uncached, the next one is cached.
    const knownAccount = this.accountOfKey.get(keyHash);
    const epoch = knownAccount ? await this.epochs.current(knownAccount).catch(() => undefined) : undefined;
    const request: AuthenticateKeyRequest = { keyHash };
    const principal = await this.services.request(Rpc.keysAuthenticate, request);
    const value = principal
      ? { principal, ipAllowlist: principal.proxy?.ipWhitelist.length ? new IpAllowlist(principal.proxy.ipWhitelist) : EMPTY_ALLOWLIST }
      : null;
    if (!value) {
      this.accountOfKey.delete(keyHash);
      return null;
    }
    this.rememberAccount(keyHash, value.principal.accountId);
    if (generation !== this.generation) return value;
    if (epoch !== undefined && value.principal.accountId === knownAccount) this.store(keyHash, value, epoch);
    return value;
  }

  /** A key belongs to one account for life, so this map is never invalidated, only bounded. */
  private rememberAccount(keyHash: string, accountId: string): void {
    if (this.accountOfKey.size >= this.maxEntries && !this.accountOfKey.has(keyHash)) {
      const oldest = this.accountOfKey.keys().next().value;
      if (oldest !== undefined) this.accountOfKey.delete(oldest);
    }
    this.accountOfKey.set(keyHash, accountId);
  }

  private store(keyHash: string, value: Authenticated, epoch: string): void {
    this.drop(keyHash);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    const accountId = value.principal.accountId;
    // The cached answer carries its epoch for the request's script to compare.
    this.entries.set(keyHash, { value: { ...value, epoch }, accountId, epoch, expiresAt: Date.now() + this.ttlMs });
    let hashes = this.byAccount.get(accountId);
    if (!hashes) this.byAccount.set(accountId, (hashes = new Set()));
    hashes.add(keyHash);
  }

  private drop(keyHash: string): void {
    const entry = this.entries.get(keyHash);
    if (!entry) return;
    this.entries.delete(keyHash);
    this.byAccount.get(entry.accountId)?.delete(keyHash);
  }
}
