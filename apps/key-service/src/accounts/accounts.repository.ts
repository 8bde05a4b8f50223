import { Injectable } from '@nestjs/common';
import { Account, Prisma, PrismaService } from '@gateway/db';
import type { Plan } from '@gateway/contracts';

export interface NewAccount {
  id: string;
  plan: Plan;
  credits: string;
  isBootstrap?: boolean;
}

@Injectable()
export class AccountsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findById(id: string): Promise<Account | null> {
    return this.prisma.account.findUnique({ where: { id } });
  }

  findBootstrap(): Promise<Account | null> {
    return this.prisma.account.findFirst({ where: { isBootstrap: true }, orderBy: { createdAt: 'asc' } });
  }

  list(): Promise<Account[]> {
    return this.prisma.account.findMany({ orderBy: { createdAt: 'asc' } });
  }

  /** Creates the account and its first keys together, or nothing. */
  createWithKeys(account: NewAccount, keys: Prisma.ApiKeyCreateManyAccountInput[]): Promise<Account> {
    return this.prisma.account.create({
      data: {
        id: account.id,
        plan: account.plan,
        credits: new Prisma.Decimal(account.credits),
        isBootstrap: account.isBootstrap ?? false,
        keys: { createMany: { data: keys } },
      },
    });
  }

  setPlan(id: string, plan: Plan): Promise<Account> {
    return this.prisma.account.update({ where: { id }, data: { plan } });
  }

  /** Adds (or with a negative amount, removes) credits in one statement; returns the new balance. */
  addCredits(id: string, amount: string): Promise<Account> {
    return this.prisma.account.update({
      where: { id },
      data: { credits: { increment: new Prisma.Decimal(amount) } },
    });
  }
}
