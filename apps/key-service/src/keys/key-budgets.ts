import { Injectable } from '@nestjs/common';
import { windowResetsAt, windowSpan } from '@gateway/billing';
import { KeyBudget } from '@gateway/contracts';
import { Account, ApiKey, Prisma, PrismaService, windowSpend } from '@gateway/db';
import { DevPassWindows } from './devpass-windows';
import { budgetWindows, keyBudgets, unixSeconds } from './key-records';

type BudgetedKey = Pick<ApiKey, 'id' | 'type' | 'allocatedAmount' | 'usedAmount' | 'spendWindow' | 'windowStartedAt' | 'budgets'> & {
  /** Needed for a DevPass key (its plan's token windows). */
  account?: Pick<Account, 'plan'>;
};

/**
 * Every budget of a key and where it stands at `now`: for a proxy key the allocation (from the
 * key's row), then each budget window with its spend read from the ledger (usage_logs), as
 * budget-windows.ts cuts time; for a DevPass key its plan's token windows, counted in tokens. A
 * rolling window resets (frees room) when its oldest charge still inside leaves; `null` when it
 * holds none.
 */
@Injectable()
export class KeyBudgets {
  constructor(
    private readonly prisma: PrismaService,
    private readonly devPassWindows: DevPassWindows,
  ) {}

  async of(key: BudgetedKey, now = Date.now()): Promise<KeyBudget[]> {
    const allocation = keyBudgets(key, new Date(now));
    const unit = key.type === 'dev' ? 'tokens' : 'credits';
    const windows = key.type === 'proxy' ? budgetWindows(key) : key.type === 'dev' && key.account ? this.devPassWindows.byPlan[key.account.plan] : [];
    if (windows.length === 0) return allocation;
    const spent = await windowSpend(
      this.prisma,
      key.id,
      windows.map((window) => windowSpan(window, now)),
      unit,
    );
    return [
      ...allocation,
      ...windows.map((window, index): KeyBudget => {
        const buckets = spent[index];
        const amount = new Prisma.Decimal(window.amount);
        const used = buckets.reduce((sum, bucket) => sum.plus(bucket.credits), new Prisma.Decimal(0));
        const resetsAt = windowResetsAt(window, now, buckets[0]?.at ?? null);
        return {
          period: window.period,
          timezone: window.timezone,
          unit,
          amount: amount.toNumber(),
          used: used.toNumber(),
          remaining: Prisma.Decimal.max(0, amount.minus(used)).toNumber(),
          resets_at: resetsAt === null ? null : unixSeconds(new Date(resetsAt)),
        };
      }),
    ];
  }
}
