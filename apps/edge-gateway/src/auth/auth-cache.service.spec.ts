import { Principal } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { AuthCacheService } from './auth-cache.service';

/** A key-service stand-in at the transport seam: counts lookups, answers from a table. */
class KeyLookupStub {
  calls = 0;
  principals = new Map<string, Principal | null>();
  gate?: Promise<void>;

  async request<T>(_subject: string, payload: { keyHash: string }): Promise<T> {
    this.calls++;
    if (this.gate) await this.gate;
    return (this.principals.get(payload.keyHash) ?? null) as T;
  }
}

const principal = (accountId: string): Principal => ({
  keyId: `key_${accountId}`,
  keyType: 'master',
  accountId,
  plan: 'pro',
  maskedKey: 'ek-...abcd',
  proxy: null,
});

function setup(options = { ttlMs: 60_000, maxEntries: 100, negativeTtlMs: 60_000 }) {
  const stub = new KeyLookupStub();
  const cache = new AuthCacheService(stub as unknown as ServiceClient, options);
  return { stub, cache };
}

describe('AuthCacheService', () => {
  it('asks key-service once per key, however many requests arrive together', async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.authenticate('ek-a')));
    expect(results.every((result) => result?.principal.accountId === 'acct_a')).toBe(true);
    await cache.authenticate('ek-a');
    expect(stub.calls).toBe(1);
  });

  it('drops every entry of an account on a key-change event', async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    stub.principals.set(AuthCacheService.hash('ek-b'), principal('acct_b'));
    await cache.authenticate('ek-a');
    await cache.authenticate('ek-b');
    stub.principals.delete(AuthCacheService.hash('ek-a'));
    cache.invalidate({ accountId: 'acct_a', keyHashes: [], reason: 'master_regenerated' });
    expect(await cache.authenticate('ek-a')).toBeNull();
    expect((await cache.authenticate('ek-b'))?.principal.accountId).toBe('acct_b');
    expect(stub.calls).toBe(3);
  });

  it("forgets an account's entries when this edge relayed a change to its keys", async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    await cache.authenticate('ek-a');
    stub.principals.delete(AuthCacheService.hash('ek-a'));
    cache.forgetAccount('acct_a');
    expect(await cache.authenticate('ek-a')).toBeNull();
    expect(stub.calls).toBe(2);
  });

  it('drops remembered unknown keys named in an event', async () => {
    const { stub, cache } = setup();
    expect(await cache.authenticate('ek-new')).toBeNull();
    stub.principals.set(AuthCacheService.hash('ek-new'), principal('acct_n'));
    cache.invalidate({ accountId: 'acct_n', keyHashes: [AuthCacheService.hash('ek-new')], reason: 'proxy_created' });
    expect((await cache.authenticate('ek-new'))?.principal.accountId).toBe('acct_n');
  });

  it('does not cache an answer fetched while a key-change event arrived', async () => {
    const { stub, cache } = setup();
    let release!: () => void;
    stub.gate = new Promise((resolve) => (release = resolve));
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    const pending = cache.authenticate('ek-a');
    cache.invalidate({ accountId: 'acct_a', keyHashes: [], reason: 'proxy_toggled' });
    release();
    await pending;
    stub.gate = undefined;
    await cache.authenticate('ek-a');
    expect(stub.calls).toBe(2);
  });

  it('expires entries after the TTL and evicts the oldest beyond the size bound', async () => {
    const { stub, cache } = setup({ ttlMs: 1, maxEntries: 2, negativeTtlMs: 1 });
    for (const key of ['ek-1', 'ek-2', 'ek-3']) stub.principals.set(AuthCacheService.hash(key), principal(key));
    await cache.authenticate('ek-1');
    await cache.authenticate('ek-2');
    await cache.authenticate('ek-3');
    expect(cache.size).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await cache.authenticate('ek-3');
    expect(stub.calls).toBe(4);
  });
});
