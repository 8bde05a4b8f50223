import { ApiKey, Prisma } from '@gateway/db';
import { countsInCurrentWindow, nextWindowStart } from '@gateway/billing';
import { BudgetWindowSpec, KeyBudget, KeyTypeNames, KeyView, Plan, Principal, ProxyKeyRecord } from '@gateway/contracts';
import type { Account } from '@gateway/db';

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function toPrincipal(key: ApiKey & { account: Account }, devPassWindows: Record<Plan, BudgetWindowSpec[]>): Principal {
  const tokenBudgets = key.type === 'dev' ? devPassWindows[key.account.plan] : [];
  return {
    ...(tokenBudgets.length > 0 ? { tokenBudgets } : {}),
    keyId: key.id,
    keyType: key.type,
    accountId: key.accountId,
    plan: key.account.plan,
    maskedKey: key.maskedKey,
    proxy:
      key.type === 'proxy'
        ? {
            isActive: key.isActive,
            expiresAt: key.expiresAt ? unixSeconds(key.expiresAt) : null,
            modelWhitelist: key.modelWhitelist,
            ipWhitelist: key.ipWhitelist,
            allocatedAmount: key.allocatedAmount.toString(),
            spendWindow: key.spendWindow,
            budgets: budgetWindows(key),
            enabledThinking: key.enabledThinking,
          }
        : null,
  };
}

/** A proxy key's budget windows beyond its allocation, as stored (written by ProxyKeysService only). */
export function budgetWindows(key: Pick<ApiKey, 'budgets'>): BudgetWindowSpec[] {
  return Array.isArray(key.budgets) ? (key.budgets as unknown as BudgetWindowSpec[]) : [];
}

/**
 * Credits used in the key's current spend window: what was stored for an earlier window counts as
 * nothing once a new one has begun (metering resets the stored amount only with the next charge).
 */
export function usedInCurrentWindow(key: Pick<ApiKey, 'usedAmount' | 'spendWindow' | 'windowStartedAt'>, now: Date): Prisma.Decimal {
  return countsInCurrentWindow(key.spendWindow, key.windowStartedAt, now) ? key.usedAmount : new Prisma.Decimal(0);
}

/**
 * The spec's proxy-key record; `user_id` and `enabled_thinking` only where the caller asks for them.
 * `budgets`: every window and where it stands (`KeyBudgets.of`).
 */
export function toProxyKeyRecord(key: ApiKey, value: string, withOwner: boolean, budgets: KeyBudget[], now = new Date()): ProxyKeyRecord {
  const record: ProxyKeyRecord = {
    id: key.id,
    name: key.name ?? '',
    key: value,
    expires_at: key.expiresAt ? unixSeconds(key.expiresAt) : -1,
    allocated_ammount: key.allocatedAmount.toNumber(),
    used_ammount: usedInCurrentWindow(key, now).toNumber(),
    spend_window: key.spendWindow,
    is_active: key.isActive,
    model_whitelist: key.modelWhitelist,
    ip_whitelist: key.ipWhitelist,
    created_at: unixSeconds(key.createdAt),
    last_used: key.lastUsedAt ? unixSeconds(key.lastUsedAt) : null,
    budgets,
  };
  if (withOwner) {
    record.user_id = key.accountId;
    record.enabled_thinking = key.enabledThinking;
  }
  return record;
}

/**
 * The allocation as a budget, where it stands: its spend window (`lifetime` without one), in UTC.
 * Master and DevPass keys have none. Sums stay decimal until they become JSON numbers, as
 * `used_ammount` does. A proxy key's other windows are read from the ledger (`KeyBudgets`).
 */
export function keyBudgets(key: Pick<ApiKey, 'type' | 'allocatedAmount' | 'usedAmount' | 'spendWindow' | 'windowStartedAt'>, now: Date): KeyBudget[] {
  if (key.type !== 'proxy') return [];
  const used = usedInCurrentWindow(key, now);
  const resetsAt = nextWindowStart(key.spendWindow, now);
  return [
    {
      period: key.spendWindow ?? 'lifetime',
      timezone: 'UTC',
      unit: 'credits',
      amount: key.allocatedAmount.toNumber(),
      used: used.toNumber(),
      remaining: Prisma.Decimal.max(0, key.allocatedAmount.minus(used)).toNumber(),
      resets_at: resetsAt ? unixSeconds(resetsAt) : null,
    },
  ];
}

/**
 * The calling key as its holder sees it (`GET /v1/key`). Master and DevPass keys are shown as the
 * edge treats them: it checks no state, expiry or whitelist on them, whatever their row holds.
 */
export function toKeyView(key: ApiKey & { account: Pick<Account, 'plan'> }, budgets: KeyBudget[]): KeyView {
  const proxy = key.type === 'proxy';
  return {
    type: KeyTypeNames[key.type],
    name: key.name,
    masked_key: key.maskedKey,
    plan: key.account.plan,
    is_active: proxy ? key.isActive : true,
    expires_at: proxy && key.expiresAt ? unixSeconds(key.expiresAt) : -1,
    model_whitelist: proxy ? key.modelWhitelist : [],
    ip_whitelist: proxy ? key.ipWhitelist : [],
    budgets,
  };
}
