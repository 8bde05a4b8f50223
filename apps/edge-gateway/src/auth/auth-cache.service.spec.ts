import { Principal } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { AuthCacheService } from './auth-cache.service';
import { RevocationEpochs } from './revocation-epochs';

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

/** Redis's epoch counters, in memory; `down` makes every read fail as an unreachable Redis does. */
class EpochStore {
  readonly epochs = new Map<string, number>();
  down = false;
  reads = 0;

  async current(accountId: string): Promise<string> {
    this.reads++;
    if (this.down) throw new Error('Connection is closed.');
    return String(this.epochs.get(accountId) ?? 0);
  }

  async bump(accountId: string): Promise<void> {
    this.epochs.set(accountId, (this.epochs.get(accountId) ?? 0) + 1);
  }
}

const OPTIONS = { AUTH_CACHE_TTL_SECONDS: 60, AUTH_CACHE_MAX_ENTRIES: 100 };

function setup(options = OPTIONS, epochs = new EpochStore()) {
  const stub = new KeyLookupStub();
  const cache = new AuthCacheService(stub as unknown as ServiceClient, options, epochs as unknown as RevocationEpochs);
  return { stub, cache, epochs };
}

/** The first answer for a key is not cached (its account is unknown until then); the second is. */
async function warm(cache: AuthCacheService, ...keys: string[]): Promise<void> {
  for (const key of keys) {
    await cache.authenticate(key);
    await cache.authenticate(key);
  }
}

/**
 * What the rate-limit guard does with an answer: a cached one carries the epoch it was filled under,
 * which the request's script compares with the current one; a difference asks key-service again.
 */
async function admit(cache: AuthCacheService, epochs: EpochStore, key: string) {
  const found = await cache.authenticate(key);
  if (found?.epoch === undefined) return found;
  return (await epochs.current(found.principal.accountId)) === found.epoch ? found : cache.reauthenticate(key);
}

describe('AuthCacheService', () => {
  it('asks key-service once per key, however many requests arrive together', async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.authenticate('ek-a')));
    expect(results.every((result) => result?.principal.accountId === 'acct_a')).toBe(true);
    expect(stub.calls).toBe(1);
    await warm(cache, 'ek-a');
    await cache.authenticate('ek-a');
    expect(stub.calls).toBe(2);
  });

  it('drops every entry of an account on a key-change event', async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    stub.principals.set(AuthCacheService.hash('ek-b'), principal('acct_b'));
    await warm(cache, 'ek-a', 'ek-b');
    stub.principals.delete(AuthCacheService.hash('ek-a'));
    cache.invalidate({ accountId: 'acct_a', keyHashes: [], reason: 'master_regenerated' });
    expect(await cache.authenticate('ek-a')).toBeNull();
    expect((await cache.authenticate('ek-b'))?.principal.accountId).toBe('acct_b');
    expect(stub.calls).toBe(5);
  });

  it("forgets an account's entries when this edge relayed a change to its keys", async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    await warm(cache, 'ek-a');
    stub.principals.delete(AuthCacheService.hash('ek-a'));
    await cache.forgetAccount('acct_a');
    expect(await cache.authenticate('ek-a')).toBeNull();
    expect(stub.calls).toBe(3);
  });

  it('asks key-service again on every replica once a change bumped the epoch, without any event', async () => {
    const epochs = new EpochStore();
    const replica = setup(OPTIONS, epochs);
    const other = setup(OPTIONS, epochs);
    replica.stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    await warm(replica.cache, 'ek-a');
    expect(replica.stub.calls).toBe(2);
    expect(await admit(replica.cache, epochs, 'ek-a')).not.toBeNull();
    expect(replica.stub.calls).toBe(2);
    await other.cache.forgetAccount('acct_a');
    replica.stub.principals.delete(AuthCacheService.hash('ek-a'));
    expect(await admit(replica.cache, epochs, 'ek-a')).toBeNull();
    expect(replica.stub.calls).toBe(3);
  });

  it('answers a hit with the epoch it was filled under, and a fresh answer with none', async () => {
    const { stub, cache, epochs } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    expect((await cache.authenticate('ek-a'))?.epoch).toBeUndefined();
    await epochs.bump('acct_a');
    expect((await cache.authenticate('ek-a'))?.epoch).toBeUndefined(); // the first answer was not cached
    expect((await cache.authenticate('ek-a'))?.epoch).toBe('1');
    expect(stub.calls).toBe(2);
    const fresh = await cache.reauthenticate('ek-a');
    expect(fresh?.epoch).toBeUndefined();
    expect(stub.calls).toBe(3);
  });

  it('asks key-service anew on reauthenticate, not joining a lookup that began before the change', async () => {
    const { stub, cache } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    let release!: () => void;
    stub.gate = new Promise((resolve) => (release = resolve));
    const before = cache.authenticate('ek-a');
    const after = cache.reauthenticate('ek-a');
    release();
    await Promise.all([before, after]);
    expect(stub.calls).toBe(2);
  });

  it('stores an answer that straddles a bump under the old epoch, so the next hit asks again', async () => {
    const { stub, cache, epochs } = setup();
    stub.principals.set(AuthCacheService.hash('ek-a'), principal('acct_a'));
    await cache.authenticate('ek-a');
    let release!: () => void;
    stub.gate = new Promise((resolve) => (release = resolve));
    const pending = cache.authenticate('ek-a');
    // Another replica's change lands while key-service's (old) answer is on its way.
    await new Promise((resolve) => setImmediate(resolve));
    await epochs.bump('acct_a');
    release();
    await pending;
    stub.gate = undefined;
    stub.principals.delete(AuthCacheService.hash('ek-a'));
    expect(await admit(cache, epochs, 'ek-a')).toBeNull();
    expect(stub.calls).toBe(3);
  });

  it('answers a revoked key by the path of a key never issued: key-service asked each time, no epoch read, nothing cached', async () => {
    const { stub, cache, epochs } = setup();
    stub.principals.set(AuthCacheService.hash('ek-gone'), principal('acct_a'));
    await warm(cache, 'ek-gone');
    stub.principals.delete(AuthCacheService.hash('ek-gone'));
    await cache.forgetAccount('acct_a');
    // The first refusal after the change: this replica still knew the key's account.
    expect(await cache.authenticate('ek-gone')).toBeNull();
    const path = async (key: string) => {
      const [lookups, epochReads] = [stub.calls, epochs.reads];
      const found = await cache.authenticate(key);
      return { found, lookups: stub.calls - lookups, epochReads: epochs.reads - epochReads };
    };
    const revoked = [await path('ek-gone'), await path('ek-gone'), await path('ek-gone')];
    const neverIssued = [await path('ek-random-1'), await path('ek-random-2'), await path('ek-random-2')];
    expect(revoked).toEqual(neverIssued);
    expect(neverIssued[0]).toEqual({ found: null, lookups: 1, epochReads: 0 });
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
    const { stub, cache } = setup({ AUTH_CACHE_TTL_SECONDS: 0.001, AUTH_CACHE_MAX_ENTRIES: 2 });
    const { stub: longStub, cache: longCache } = setup({ AUTH_CACHE_TTL_SECONDS: 60, AUTH_CACHE_MAX_ENTRIES: 2 });
    for (const key of ['ek-1', 'ek-2', 'ek-3']) {
      stub.principals.set(AuthCacheService.hash(key), principal(key));
      longStub.principals.set(AuthCacheService.hash(key), principal(key));
    }
    await warm(longCache, 'ek-1', 'ek-2', 'ek-3');
    expect(longCache.size).toBe(2);
    await warm(cache, 'ek-3');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await cache.authenticate('ek-3');
    expect(stub.calls).toBe(3);
  });
});
