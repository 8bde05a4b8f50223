import type { AccountBudget, Principal } from '@gateway/contracts';
import { AdmitGate, AdmitResult, NANO_PER_CREDIT, ReserveRequest } from '@gateway/billing';
import { ServiceClient } from '../nats/service-client';
import { BudgetService, BudgetStorePort } from './budget.service';

/**
 * The budget's Redis figures as a map (BudgetStore's behaviour for one key's allocation): a
 * window's spend is cold until primed, and a reservation fits while spend plus it stays within the
 * allocation.
 */
class AllocationStore implements BudgetStorePort {
  readonly spend = new Map<string, number>();
  balanced = false;

  async admit(request: ReserveRequest): Promise<AdmitResult> {
    const windows = { requests: 0, tokens: 0 };
    if (!this.balanced) return { ok: false, reason: 'cold-balance', ...windows };
    const key = `${request.proxy!.keyId}:${request.proxy!.windowId}`;
    const used = this.spend.get(key);
    if (used === undefined) return { ok: false, reason: 'cold-allocation', ...windows };
    if (used + request.costNano > request.proxy!.allocationNano) {
      return { ok: false, reason: 'allocation', available: request.proxy!.allocationNano - used, ...windows };
    }
    this.spend.set(key, used + request.costNano);
    return { ok: true, ...windows };
  }

  async release(): Promise<void> {
    // nothing reserved is tracked apart from the spend
  }

  async primeBalance(): Promise<void> {
    this.balanced = true;
  }

  async primeKeySpend(_accountId: string, keyId: string, windowId: string, usedNano: number): Promise<void> {
    if (!this.spend.has(`${keyId}:${windowId}`)) this.spend.set(`${keyId}:${windowId}`, usedNano);
  }

  async primeWindows(): Promise<void> {
    // this key has no budget windows
  }
}

const weeklyKey: Principal = {
  keyId: 'key_w',
  keyType: 'proxy',
  accountId: 'acct_w',
  plan: 'pro',
  maskedKey: 'ek-proxy-...wxyz',
  proxy: {
    isActive: true,
    expiresAt: null,
    modelWhitelist: [],
    ipWhitelist: [],
    allocatedAmount: '1',
    spendWindow: 'weekly',
    budgets: [],
    enabledThinking: false,
  },
};

const gate: AdmitGate = { accountId: 'acct', expectedEpoch: '', minute: 1, requestsPerMinute: 10, tokensPerMinute: 10, tokens: 0 };

describe('BudgetService spend windows (with an injected clock)', () => {
  it('refuses a weekly key that spent its allocation this week, and lets it through once the next week begins', async () => {
    const store = new AllocationStore();
    let now = new Date('2030-01-11T10:00:00Z'); // a Friday
    // What account-service reports from the ledger: 1 credit spent in the week of Monday 7 January.
    const ledger: AccountBudget = { credits: '50', key: { used: '1', windowStartedAt: Date.parse('2030-01-07T00:00:00Z') } };
    const services = { request: async () => ledger } as unknown as ServiceClient;
    const budget = new BudgetService(store, services, { RESERVATION_TTL_MS: 60_000 }, () => now);

    const reserve = async (requestId: string) => {
      const result = await budget.admit(weeklyKey, requestId, 0.5, gate);
      if (!result.ok) throw budget.refusal(weeklyKey, result.costNano, result as never);
    };

    await expect(reserve('req_1')).rejects.toThrow(/Proxy key allocation exhausted/);
    now = new Date('2030-01-13T23:59:59Z'); // Sunday: still that week
    await expect(reserve('req_2')).rejects.toThrow(/Proxy key allocation exhausted/);
    now = new Date('2030-01-14T00:00:00Z'); // Monday: a new window, whatever the ledger still holds
    await expect(reserve('req_3')).resolves.toBeUndefined();
    expect(store.spend.get(`key_w:${Date.parse('2030-01-14T00:00:00Z')}`)).toBe(0.5 * NANO_PER_CREDIT);
  });
});

/**
 * Redis as a failover shows it to the edge: the admission script ran (the reservation is held) but
 * its answer was lost with the connection, and the first release after that finds Redis still away.
 */
class FailingOverStore implements BudgetStorePort {
  readonly held = new Set<string>();
  releaseAttempts = 0;

  async admit(request: ReserveRequest): Promise<AdmitResult> {
    this.held.add(request.requestId);
    throw Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' });
  }

  async release(_accountId: string, requestId: string): Promise<void> {
    this.releaseAttempts++;
    if (this.releaseAttempts === 1) throw new Error('Connection is closed.');
    this.held.delete(requestId);
  }

  async primeBalance(): Promise<void> {
    // never reached: the admission fails first
  }

  async primeKeySpend(): Promise<void> {
    // never reached: the admission fails first
  }

  async primeWindows(): Promise<void> {
    // never reached: the admission fails first
  }
}

describe('BudgetService when the admission answer is lost', () => {
  it('fails the request and releases the reservation the script may have held, once Redis answers again', async () => {
    const store = new FailingOverStore();
    const services = { request: async () => ({ credits: '50' }) } as unknown as ServiceClient;
    const budget = new BudgetService(store, services, { RESERVATION_TTL_MS: 60_000 }, () => new Date('2030-01-11T10:00:00Z'));

    await expect(budget.admit(weeklyKey, 'req_lost', 0.5, gate)).rejects.toThrow(/max retries/);
    const deadline = Date.now() + 5_000;
    while (store.held.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.held.size).toBe(0);
    expect(store.releaseAttempts).toBe(2);
  });
});
