import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { READINESS_CHECKS, ReadinessCheck } from '@gateway/platform';
import { PrismaClient } from './generated/prisma/client';

export const DATABASE_URL = Symbol('DATABASE_URL');

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(DATABASE_URL) databaseUrl: string) {
    // No `statementNameGenerator`: the adapter then sends unnamed statements only, each parsed,
    // bound and run before one Sync, so PgBouncer in transaction mode may hand the server connection
    // to another client between any two statements (named ones need PgBouncer 1.21 or later with
    // max_prepared_statements; Debian 12 ships 1.18). docs/operations.md#pgbouncer
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
