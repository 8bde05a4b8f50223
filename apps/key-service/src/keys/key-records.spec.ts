import { Prisma } from '@gateway/db';
import type { Account, ApiKey } from '@gateway/db';
import { keyBudgets, toKeyView, usedInCurrentWindow } from './key-records';

describe('usedInCurrentWindow', () => {
  const used = new Prisma.Decimal('2.5');
  const now = new Date('2030-01-15T10:00:00Z'); // a Tuesday

  it('is the stored amount while the window it was counted in is the current one', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: new Date('2030-01-15T00:00:00Z') }, now).toString()).toBe('2.5');
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'weekly', windowStartedAt: new Date('2030-01-14T00:00:00Z') }, now).toString()).toBe('2.5');
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'monthly', windowStartedAt: new Date('2030-01-01T00:00:00Z') }, now).toString()).toBe('2.5');
  });

  it('is 0 once a new window has begun, before anything is charged in it', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: new Date('2030-01-14T00:00:00Z') }, now).toString()).toBe('0');
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'weekly', windowStartedAt: new Date('2030-01-07T00:00:00Z') }, now).toString()).toBe('0');
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'monthly', windowStartedAt: new Date('2029-12-01T00:00:00Z') }, now).toString()).toBe('0');
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: null }, now).toString()).toBe('0');
  });

  it('a key without a window has one lifetime amount', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: null, windowStartedAt: null }, now).toString()).toBe('2.5');
  });
});

describe('the key view and its budgets', () => {
  const now = new Date('2030-01-15T10:00:00Z'); // a Tuesday
  const unix = (iso: string) => Date.parse(iso) / 1000;

  type Row = ApiKey & { account: Pick<Account, 'plan'> };
  const row = (fields: Partial<Row>): Row => ({
    id: 'key_1',
    accountId: 'acct_1',
    type: 'proxy',
    keyHash: 'h',
    maskedKey: 'ek-proxy-...a1b2',
    encryptedKey: null,
    name: 'ci runner',
    expiresAt: null,
    allocatedAmount: new Prisma.Decimal(1),
    usedAmount: new Prisma.Decimal(0),
    windowStartedAt: null,
    spendWindow: null,
    isActive: true,
    modelWhitelist: [],
    ipWhitelist: [],
    enabledThinking: false,
    budgets: [],
    createdAt: new Date('2030-01-01T00:00:00Z'),
    lastUsedAt: null,
    account: { plan: 'pro' },
    ...fields,
  });

  it("gives a proxy key one budget: its allocation, what the window's spend left of it, and when the window resets", () => {
    const key = row({ spendWindow: 'daily', usedAmount: new Prisma.Decimal('0.9'), windowStartedAt: new Date('2030-01-15T00:00:00Z') });
    // In binary floating point 1 - 0.9 is 0.09999999999999998: the difference is taken in decimals.
    expect(keyBudgets(key, now)).toEqual([
      { period: 'daily', timezone: 'UTC', unit: 'credits', amount: 1, used: 0.9, remaining: 0.1, resets_at: unix('2030-01-16T00:00:00Z') },
    ]);
    expect(keyBudgets({ ...key, spendWindow: 'weekly', windowStartedAt: new Date('2030-01-14T00:00:00Z') }, now)[0]).toMatchObject({
      period: 'weekly',
      used: 0.9,
      resets_at: unix('2030-01-21T00:00:00Z'),
    });
    expect(keyBudgets({ ...key, spendWindow: 'monthly', windowStartedAt: new Date('2030-01-01T00:00:00Z') }, now)[0]).toMatchObject({
      period: 'monthly',
      used: 0.9,
      resets_at: unix('2030-02-01T00:00:00Z'),
    });
  });

  it('starts a window that has begun since the last charge from zero', () => {
    const key = row({ spendWindow: 'daily', usedAmount: new Prisma.Decimal('0.9'), windowStartedAt: new Date('2030-01-14T00:00:00Z') });
    expect(keyBudgets(key, now)).toEqual([
      { period: 'daily', timezone: 'UTC', unit: 'credits', amount: 1, used: 0, remaining: 1, resets_at: unix('2030-01-16T00:00:00Z') },
    ]);
  });

  it('has a lifetime budget, never reset, for a key without a window; never less than 0 left', () => {
    const key = row({ allocatedAmount: new Prisma.Decimal('2'), usedAmount: new Prisma.Decimal('2.000000000001') });
    expect(keyBudgets(key, now)).toEqual([
      { period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 2, used: 2.000000000001, remaining: 0, resets_at: null },
    ]);
  });

  it("shows a proxy key's own record: name, state, expiry and whitelists", () => {
    const key = row({
      isActive: false,
      expiresAt: new Date('2030-02-01T00:00:00Z'),
      modelWhitelist: ['sim-chat'],
      ipWhitelist: ['10.0.0.0/8'],
      account: { plan: 'basic' },
    });
    expect(toKeyView(key, keyBudgets(key, now))).toEqual({
      type: 'proxy',
      name: 'ci runner',
      masked_key: 'ek-proxy-...a1b2',
      plan: 'basic',
      is_active: false,
      expires_at: unix('2030-02-01T00:00:00Z'),
      model_whitelist: ['sim-chat'],
      ip_whitelist: ['10.0.0.0/8'],
      budgets: [{ period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 1, used: 0, remaining: 1, resets_at: null }],
    });
  });

  it('shows master and DevPass keys as the edge treats them: active, never expiring, unrestricted, no budgets yet', () => {
    // Columns only proxy keys use: whatever they hold, nothing enforces them on these keys.
    const unused = {
      isActive: false,
      expiresAt: new Date('2020-01-01T00:00:00Z'),
      modelWhitelist: ['x'],
      ipWhitelist: ['10.0.0.1'],
      spendWindow: 'daily' as const,
    };
    expect(toKeyView(row({ ...unused, type: 'master', name: null, maskedKey: 'ek-...wxyz' }), keyBudgets(row({ ...unused, type: 'master' }), now))).toEqual({
      type: 'master',
      name: null,
      masked_key: 'ek-...wxyz',
      plan: 'pro',
      is_active: true,
      expires_at: -1,
      model_whitelist: [],
      ip_whitelist: [],
      budgets: [],
    });
    expect(
      toKeyView(row({ ...unused, type: 'dev', name: 'laptop', maskedKey: 'ek-dev-...wxyz' }), keyBudgets(row({ ...unused, type: 'dev' }), now)),
    ).toMatchObject({
      type: 'devpass',
      name: 'laptop',
      is_active: true,
      expires_at: -1,
      budgets: [],
    });
  });
});
