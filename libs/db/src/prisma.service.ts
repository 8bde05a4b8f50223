import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { READINESS_CHECKS, ReadinessCheck } from '@gateway/platform';
import { PrismaClient } from './generated/prisma/client';

export const DATABASE_URL = Symbol('DATABASE_URL');

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(DATABASE_URL) databaseUrl: string) {
    super({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  }

  async onModuleInit(): Promise<void> {
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }

  async isReachable(): Promise<boolean> {
    try {
      await this.$queryRaw`SELECT 1`;
      return true;
    } catch {
      return false;
    }
  }
}

/** Readiness provider for services whose work needs PostgreSQL. */
export const postgresReadinessProvider = {
  provide: READINESS_CHECKS,
  inject: [PrismaService],
  useFactory: (prisma: PrismaService): ReadinessCheck[] => [{ name: 'postgresql', check: () => prisma.isReachable() }],
};
