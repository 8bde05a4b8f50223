import { ApiKey } from '@gateway/db';
import { countsInCurrentWindow } from '@gateway/billing';
import { Principal, ProxyKeyRecord } from '@gateway/contracts';
import type { Account } from '@gateway/db';

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function toPrincipal(key: ApiKey & { account: Account }): Principal {
  return {
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
            enabledThinking: key.enabledThinking,
          }
        : null,
  };
}

/**
 * Credits used in the key's current spend window: what was stored for an earlier window counts as
 * nothing once a new one has begun (metering resets the stored amount only with the next charge).
 */
export function usedInCurrentWindow(key: Pick<ApiKey, 'usedAmount' | 'spendWindow' | 'windowStartedAt'>, now: Date): number {
  return countsInCurrentWindow(key.spendWindow, key.windowStartedAt, now) ? key.usedAmount.toNumber() : 0;
}

/** The spec's proxy-key record; `user_id` and `enabled_thinking` only where the caller asks for them. */
export function toProxyKeyRecord(key: ApiKey, value: string, withOwner: boolean, now = new Date()): ProxyKeyRecord {
  const record: ProxyKeyRecord = {
    name: key.name ?? '',
    key: value,
    expires_at: key.expiresAt ? unixSeconds(key.expiresAt) : -1,
    allocated_ammount: key.allocatedAmount.toNumber(),
    used_ammount: usedInCurrentWindow(key, now),
    spend_window: key.spendWindow,
    is_active: key.isActive,
    model_whitelist: key.modelWhitelist,
    ip_whitelist: key.ipWhitelist,
    created_at: unixSeconds(key.createdAt),
    last_used: key.lastUsedAt ? unixSeconds(key.lastUsedAt) : null,
  };
  if (withOwner) {
    record.user_id = key.accountId;
    record.enabled_thinking = key.enabledThinking;
  }
  return record;
}
