import { Injectable } from '@nestjs/common';
import { windowResetsAt, windowSpan } from '@gateway/billing';
import { KeyBudget } from '@gateway/contracts';
import { ApiKey, Prisma, PrismaService, windowSpend } from '@gateway/db';
import { budgetWindows, keyBudgets, unixSeconds } from './key-records';

type BudgetedKey = Pick<ApiKey, 'id' | 'type' | 'allocatedAmount' | 'usedAmount' | 'spendWindow' | 'windowStartedAt' | 'budgets'>;

/**
 * Every budget of a key and where it stands at `now`: the allocation (from the key's row), then
 * each budget window with its spend read from the ledger (usage_logs), as budget-windows.ts cuts
 * time. A rolling window resets (frees room) when its oldest charge still inside leaves; `null`
 * when it holds none.
 */
@Injectable()
export class KeyBudgets {
  constructor(private readonly prisma: PrismaService) {}

  async of(key: BudgetedKey, now = Date.now()): Promise<KeyBudget[]> {
    const allocation = keyBudgets(key, new Date(now));
    const windows = key.type === 'proxy' ? budgetWindows(key) : [];
    if (windows.length === 0) return allocation;
    const spent = await windowSpend(
      this.prisma,
      key.id,
      windows.map((window) => windowSpan(window, now)),
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
          amount: amount.toNumber(),
          used: used.toNumber(),
          remaining: Prisma.Decimal.max(0, amount.minus(used)).toNumber(),
          resets_at: resetsAt === null ? null : unixSeconds(new Date(resetsAt)),
        };
      }),
    ];
  }
}
