import { Inject, Injectable } from '@nestjs/common';
import { Plan, PROXY_KEY_CAPS } from '@gateway/contracts';
import { Account, Prisma } from '@gateway/db';

export const PLAN_DAILY_LIMITS = Symbol('PLAN_DAILY_LIMITS');

/** What each plan allows: proxy-key count (spec) and the daily allocation limit (configurable). */
@Injectable()
export class PlanPolicy {
  constructor(@Inject(PLAN_DAILY_LIMITS) private readonly dailyLimits: Record<Plan, string>) {}

  proxyKeyCap(plan: Plan): number {
    return PROXY_KEY_CAPS[plan];
  }

  dailyLimit(account: Pick<Account, 'plan' | 'dailyLimit'>): Prisma.Decimal {
    return account.dailyLimit ?? new Prisma.Decimal(this.dailyLimits[account.plan]);
  }
}
