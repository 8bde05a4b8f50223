import type { KeyType, Plan, SpendWindow } from '../keys';
import type { BudgetWindowSpec } from '../proxy-keys/budget-window';

/** Proxy-key rules, as the edge needs them to admit or refuse a request. */
export interface ProxyKeyRules {
  isActive: boolean;
  /** Unix seconds, or null for a key that never expires. */
  expiresAt: number | null;
  modelWhitelist: string[];
  ipWhitelist: string[];
  /** Decimal string: the allocation per spend window (or for the key's lifetime). */
  allocatedAmount: string;
  spendWindow: SpendWindow | null;
  /** Budget windows beyond the allocation, each admitted against too. */
  budgets: BudgetWindowSpec[];
  enabledThinking: boolean;
}

/** Who is calling: the answer to `keys.authenticate`, cached by the edge. */
export interface Principal {
  keyId: string;
  keyType: KeyType;
  accountId: string;
  plan: Plan;
  /** The masked key (prefix and last 4), safe for logs. */
  maskedKey: string;
  proxy: ProxyKeyRules | null;
  /** A DevPass key: the token windows of the account's plan (`DEVPASS_TOKEN_WINDOWS`), amounts in tokens; absent or empty: none. */
  tokenBudgets?: BudgetWindowSpec[];
}
