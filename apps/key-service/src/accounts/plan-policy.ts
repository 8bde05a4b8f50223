import { Inject, Injectable } from '@nestjs/common';
import { Plan, PROXY_KEY_CAPS } from '@gateway/contracts';
import { Account, Prisma } from '@gateway/db';
import { KeyServiceEnv, parsePlanAmounts } from '../config/key-service.env';

/** What each plan allows: proxy-key count (spec) and the daily allocation limit (configurable). */
@Injectable()
export class PlanPolicy {
  private readonly dailyLimits: Record<Plan, string>;

  constructor(@Inject(KeyServiceEnv) env: Pick<KeyServiceEnv, 'PLAN_DAILY_LIMITS'>) {
    this.dailyLimits = parsePlanAmounts(env.PLAN_DAILY_LIMITS);
  }

  proxyKeyCap(plan: Plan): number {
    return PROXY_KEY_CAPS[plan];
  }

  dailyLimit(account: Pick<Account, 'plan' | 'dailyLimit'>): Prisma.Decimal {
    return account.dailyLimit ?? new Prisma.Decimal(this.dailyLimits[account.plan]);
  }
}
