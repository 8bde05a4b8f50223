import { DynamicModule, Module } from '@nestjs/common';
import { Rpc } from '@gateway/contracts';
import { postgresReadinessProvider, PrismaModule } from '@gateway/db';
import { HealthController, healthRpcController } from '@gateway/platform';
import { AccountEnv } from './account.env';
import { ConversationsController } from './conversations/conversations.controller';
import { ConversationsRepository } from './conversations/conversations.repository';
import { ConversationsService } from './conversations/conversations.service';
import { StoredResponsesController } from './stored-responses/stored-responses.controller';
import { StoredResponsesRepository } from './stored-responses/stored-responses.repository';
import { StoredResponsesService } from './stored-responses/stored-responses.service';
import { UsageController } from './usage/usage.controller';
import { UsageRepository } from './usage/usage.repository';
import { UsageService } from './usage/usage.service';

/** Read models over the ledger (`/user/me`, `/user/logs`) the stored Responses-API responses and the Conversations-API conversations. */
@Module({})
export class AccountServiceModule {
  static forRoot(env: AccountEnv): DynamicModule {
    return {
      module: AccountServiceModule,
      imports: [PrismaModule.forRoot(env.DATABASE_URL)],
      controllers: [UsageController, StoredResponsesController, ConversationsController, HealthController, healthRpcController(Rpc.health('account-service'))],
      providers: [
        postgresReadinessProvider,
        UsageRepository,
        UsageService,
        // The service's one configuration object: services inject it and read their variables from it.
        { provide: AccountEnv, useValue: env },
        StoredResponsesRepository,
        StoredResponsesService,
        ConversationsRepository,
        ConversationsService,
      ],
    };
  }
}
