import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ModelCatalog } from '@gateway/catalog';
import type { Principal } from '@gateway/contracts';
import { DomainError } from '@gateway/errors';
import type { ServiceClient } from '../nats/service-client';
import type { ConsoleSessions } from '../console-session/console-sessions';
import { ApiKeyGuard } from './api-key.guard';
import { AuthCacheService } from './auth-cache.service';
import type { KeyUsageTracker } from './key-usage.tracker';
import type { RevocationEpochs } from './revocation-epochs';

/** key-service at the transport seam: answers the key's current principal. */
class KeyService {
  calls = 0;
  constructor(public principal: Principal) {}
  async request(): Promise<Principal> {
    this.calls++;
    return this.principal;
  }
}

/** Redis's epoch counters, shared by every edge replica. */
class Epochs {
  readonly values = new Map<string, number>();
  async current(accountId: string): Promise<string> {
    return String(this.values.get(accountId) ?? 0);
  }
  async bump(accountId: string): Promise<void> {
    this.values.set(accountId, (this.values.get(accountId) ?? 0) + 1);
  }
}

const proxyKey = (isActive: boolean): Principal => ({
  keyId: 'key_1',
  keyType: 'proxy',
  accountId: 'acc_1',
  plan: 'pro',
  maskedKey: 'ek-proxy-…abcd',
  proxy: { isActive, expiresAt: null, modelWhitelist: [], ipWhitelist: [], allocatedAmount: '10', spendWindow: null, budgets: [], enabledThinking: false },
});

/** A route with no policy decorators: authenticated, every key type, access checks on. */
function route(): ExecutionContext {
  const request = { headers: { authorization: 'Bearer ek-proxy-key' }, ip: '127.0.0.1', body: undefined };
  return {
    getHandler: () => route,
    getClass: () => ApiKeyGuard,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

function edge(keys: KeyService, epochs: Epochs): ApiKeyGuard {
  const cache = new AuthCacheService(
    keys as unknown as ServiceClient,
    { AUTH_CACHE_TTL_SECONDS: 60, AUTH_CACHE_MAX_ENTRIES: 100 },
    epochs as unknown as RevocationEpochs,
  );
  const usage = { touch: () => undefined } as unknown as KeyUsageTracker;
  // Bearer keys only here: the console's sessions are the e2e suite's (console/sessions.spec.ts).
  return new ApiKeyGuard(new Reflector(), cache, usage, {} as ModelCatalog, {} as ConsoleSessions);
}

describe('ApiKeyGuard', () => {
  it('lets a key switched back on through on a replica that had it cached as disabled, once the account’s epoch moved', async () => {
    const keys = new KeyService(proxyKey(false));
    const epochs = new Epochs();
    const guard = edge(keys, epochs);
    // The first answer teaches the cache the key's account; the second is cached (as disabled).
    for (let i = 0; i < 2; i++) await expect(guard.canActivate(route())).rejects.toThrow('Proxy key is inactive');
    const asked = keys.calls;
    await expect(guard.canActivate(route())).rejects.toBeInstanceOf(DomainError);
    expect(keys.calls).toBe(asked); // refused from the cache while nothing changed

    // Another replica switches the key on: key-service answers the new state and the epoch moves
    // before that call answers; this replica's keys.changed broadcast has not arrived.
    keys.principal = proxyKey(true);
    await epochs.bump('acc_1');
    await expect(guard.canActivate(route())).resolves.toBe(true);
    expect(keys.calls).toBe(asked + 1);
  });
});
