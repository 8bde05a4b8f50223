import { Inject, Injectable } from '@nestjs/common';
import { AuthenticateKeyRequest, KeysChangedEvent, Principal, Subjects } from '@gateway/contracts';
import { createHash } from 'node:crypto';
import { ServiceClient } from '../nats/service-client';
import { IpAllowlist } from './ip-allowlist';

export const AUTH_CACHE_OPTIONS = Symbol('AUTH_CACHE_OPTIONS');

export interface AuthCacheOptions {
  ttlMs: number;
  maxEntries: number;
  /** Unknown keys are remembered briefly, so a flood of bad keys does not reach key-service. */
  negativeTtlMs: number;
}

export interface Authenticated {
  principal: Principal;
  ipAllowlist: IpAllowlist;
}

interface Entry {
  value: Authenticated | null;
  accountId: string | null;
  expiresAt: number;
}

const EMPTY_ALLOWLIST = new IpAllowlist([]);

/**
 * key SHA-256 → principal, in memory on each edge replica. A miss asks key-service once (concurrent
 * misses for one key share the call). `keys.changed` drops the account's entries at once; the TTL
 * bounds staleness if an event is lost.
 */
@Injectable()
export class AuthCacheService {
  private readonly entries = new Map<string, Entry>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Promise<Authenticated | null>>();
  /** Bumped by every key-change event; an answer fetched across a bump is not cached. */
  private generation = 0;

  constructor(
    private readonly services: ServiceClient,
    @Inject(AUTH_CACHE_OPTIONS) private readonly options: AuthCacheOptions,
  ) {}

  static hash(key: string): string {
    return createHash('sha256').update(key).digest('hex');
  }

  async authenticate(key: string): Promise<Authenticated | null> {
    const keyHash = AuthCacheService.hash(key);
    const cached = this.entries.get(keyHash);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
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
   * After this edge relayed a change to the account's keys: its next request must see the change,
   * even before key-service's broadcast (which other replicas act on) has arrived here.
   */
  forgetAccount(accountId: string): void {
    this.forget(accountId, []);
  }

  private forget(accountId: string, keyHashes: string[]): void {
    this.generation++;
    for (const keyHash of keyHashes) this.drop(keyHash);
    for (const keyHash of this.byAccount.get(accountId) ?? []) this.drop(keyHash);
    this.byAccount.delete(accountId);
    // A request already in flight may carry the old answer; it must not be reused.
    this.inFlight.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(keyHash: string): Promise<Authenticated | null> {
    const generation = this.generation;
    const request: AuthenticateKeyRequest = { keyHash };
    const principal = await this.services.request<Principal | null>(Subjects.keysAuthenticate, request);
    const value = principal
      ? { principal, ipAllowlist: principal.proxy?.ipWhitelist.length ? new IpAllowlist(principal.proxy.ipWhitelist) : EMPTY_ALLOWLIST }
      : null;
    if (generation === this.generation) this.store(keyHash, value);
    return value;
  }

  private store(keyHash: string, value: Authenticated | null): void {
    this.drop(keyHash);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    const accountId = value?.principal.accountId ?? null;
    const ttl = value ? this.options.ttlMs : this.options.negativeTtlMs;
    this.entries.set(keyHash, { value, accountId, expiresAt: Date.now() + ttl });
    if (accountId) {
      let hashes = this.byAccount.get(accountId);
      if (!hashes) this.byAccount.set(accountId, (hashes = new Set()));
      hashes.add(keyHash);
    }
  }

  private drop(keyHash: string): void {
    const entry = this.entries.get(keyHash);
    if (!entry) return;
    this.entries.delete(keyHash);
    if (entry.accountId) this.byAccount.get(entry.accountId)?.delete(keyHash);
  }
}
