import type { AdmitGate, AdmitResult, RestoredReservation } from '@gateway/billing';
import type { Principal } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { BudgetRecovery, RecoveryStorePort, UsageProgressPort } from './budget-recovery';
import { BudgetService, BudgetStorePort } from './budget.service';
import { ErrorCode } from '@gateway/errors';

/** Redis's marker and the reservations put back, as a map. */
class MarkerStore implements RecoveryStorePort {
  marker: string | null = 'generation-1';
  readonly restored: RestoredReservation[] = [];

  async generation(): Promise<string | null> {
    return this.marker;
  }

  async warm(generation: string): Promise<string> {
    this.marker ??= generation;
    return this.marker;
  }

  async restore(reservations: RestoredReservation[]): Promise<void> {
    this.restored.push(...reservations);
  }
}

/** The usage stream's last sequence and how far metering has acknowledged it. */
class UsageProgress implements UsageProgressPort {
  last = 40;
  acknowledged = 0;
  asked = 0;

  async lastUsageSequence(): Promise<number> {
    return this.last;
  }

  async meteringCaughtUp(sequence: number): Promise<boolean> {
    this.asked++;
    return this.acknowledged >= sequence;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; !condition(); attempt++) {
    if (attempt > 500) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const reservation = (requestId: string): RestoredReservation => ({
  accountId: 'acct_r',
  requestId,
  costNano: 1000,
  expiresAt: Date.now() + 60_000,
  keyId: 'key_r',
});

describe('BudgetRecovery', () => {
  let recovery: BudgetRecovery | undefined;

  afterEach(() => recovery?.onApplicationShutdown());

  it('after Redis lost its state: puts back the reservations in flight, and writes the marker only once metering wrote the backlog', async () => {
    const store = new MarkerStore();
    const usage = new UsageProgress();
    recovery = new BudgetRecovery(store, usage, { BUDGET_PROBE_MS: 5 });
    recovery.onModuleInit();
    await until(() => recovery!.warm, 'warm at start');
    recovery.track(reservation('req_open'));
    recovery.track(reservation('req_done'));
    recovery.forget('req_done'); // its response closed: its usage event is on its way

    store.marker = null; // Redis restarted empty
    await until(() => !recovery!.warm, 'the loss seen');
    await until(() => store.restored.length > 0, 'reservations put back');
    expect(store.restored.map((restored) => restored.requestId)).toEqual(['req_open']);
    // Metering is behind the usage stream: however often it is asked, the figures stay cold.
    await until(() => usage.asked >= 3, 'metering asked a few times');
    expect(store.marker).toBeNull();
    expect(recovery.warm).toBe(false);

    usage.acknowledged = 40;
    await until(() => recovery!.warm, 'warm again');
    expect(store.marker).toEqual(expect.any(String));
    expect(store.marker).not.toBe('generation-1');
  });

  it('a marker another replica wrote meanwhile: this replica puts back its reservations in flight too', async () => {
    const store = new MarkerStore();
    recovery = new BudgetRecovery(store, new UsageProgress(), { BUDGET_PROBE_MS: 5 });
    recovery.onModuleInit();
    await until(() => recovery!.warm, 'warm at start');
    recovery.track(reservation('req_long'));
    store.marker = 'generation-2';
    await until(() => store.restored.length > 0, 'reservations put back');
    expect(store.restored.map((restored) => restored.requestId)).toEqual(['req_long']);
  });
});

describe('BudgetService while Redis has lost its state', () => {
  const principal: Principal = {
    keyId: 'key_c',
    keyType: 'proxy',
    accountId: 'acct_c',
    plan: 'pro',
    maskedKey: 'ek-proxy-...abcd',
    proxy: {
      isActive: true,
      expiresAt: null,
      modelWhitelist: [],
      ipWhitelist: [],
      allocatedAmount: '1',
      spendWindow: null,
      budgets: [],
      enabledThinking: false,
    },
  };
  const gate: AdmitGate = { accountId: 'acct', expectedEpoch: '', minute: 1, requestsPerMinute: 10, tokensPerMinute: 10, tokens: 0 };

  it('refuses with 503 and primes nothing from the ledger (a prime now would miss the backlog)', async () => {
    const cold: AdmitResult = { ok: false, reason: 'cold-store', requests: 0, tokens: 0 };
    const store = { admit: jest.fn(async () => cold) } as unknown as BudgetStorePort;
    const services = { request: jest.fn() } as unknown as ServiceClient;
    const recovery = { lost: jest.fn(), track: jest.fn(), forget: jest.fn() } as unknown as BudgetRecovery;
    const budget = new BudgetService(store, services, { RESERVATION_TTL_MS: 60_000 }, undefined, recovery);
    const result = await budget.admit(principal, 'req_1', 0.001, gate);
    expect(result).toMatchObject({ ok: false, reason: 'cold-store' });
    expect(services.request).not.toHaveBeenCalled();
    expect(recovery.lost).toHaveBeenCalled();
    expect(recovery.track).not.toHaveBeenCalled();
    expect(budget.refusal(principal, result.costNano, result as never)).toMatchObject({ code: ErrorCode.ServiceUnavailable });
  });
});
