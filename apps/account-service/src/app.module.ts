import { DynamicModule, Module } from '@nestjs/common';
import { healthSubject } from '@gateway/contracts';
import { postgresReadinessProvider, PrismaModule } from '@gateway/db';
import { DatabaseEnv, HealthController, healthRpcController } from '@gateway/platform';
import { UsageController } from './usage/usage.controller';
import { UsageRepository } from './usage/usage.repository';
import { UsageService } from './usage/usage.service';

/** Read models over the ledger: `/user/me` and `/user/logs`. */
@Module({})
export class AccountServiceModule {
  static forRoot(env: DatabaseEnv): DynamicModule {
    return {
      module: AccountServiceModule,
      imports: [PrismaModule.forRoot(env.DATABASE_URL)],
      controllers: [UsageController, HealthController, healthRpcController(healthSubject('account-service'))],
      providers: [postgresReadinessProvider, UsageRepository, UsageService],
    };
  }
}
