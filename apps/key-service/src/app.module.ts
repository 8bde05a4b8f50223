import { DynamicModule, Module } from '@nestjs/common';
import { Rpc } from '@gateway/contracts';
import { postgresReadinessProvider, PrismaModule } from '@gateway/db';
import { HealthController, healthRpcController, NATS_CLIENT_OPTIONS, NatsClientConnection, splitList } from '@gateway/platform';
import { AccountsRepository } from './accounts/accounts.repository';
import { AccountsService } from './accounts/accounts.service';
import { PlanPolicy } from './accounts/plan-policy';
import { KeyServiceEnv } from './config/key-service.env';
import { KeyCryptoService } from './crypto/key-crypto.service';
import { KeyEventsPublisher } from './events/key-events.publisher';
import { KeysController } from './keys/keys.controller';
import { KeysRepository } from './keys/keys.repository';
import { KeyBudgets } from './keys/key-budgets';
import { DevPassWindows } from './keys/devpass-windows';
import { KeysService } from './keys/keys.service';
import { ProxyKeysController } from './proxy-keys/proxy-keys.controller';
import { ProxyKeysRepository } from './proxy-keys/proxy-keys.repository';
import { ProxyKeysService } from './proxy-keys/proxy-keys.service';

@Module({})
export class KeyServiceModule {
  /** `withTransports: false` builds the same services for the admin CLI, without NATS handlers. */
  static forRoot(env: KeyServiceEnv, { withTransports = true } = {}): DynamicModule {
    return {
      module: KeyServiceModule,
      imports: [PrismaModule.forRoot(env.DATABASE_URL)],
      controllers: withTransports ? [KeysController, ProxyKeysController, HealthController, healthRpcController(Rpc.health('key-service'))] : [],
      providers: [
        // The service's one configuration object: services inject it and read their variables from it.
        { provide: KeyServiceEnv, useValue: env },
        { provide: DevPassWindows, useValue: new DevPassWindows(env.DEVPASS_TOKEN_WINDOWS) },
        postgresReadinessProvider,
        KeyCryptoService,
        { provide: NATS_CLIENT_OPTIONS, useValue: { servers: splitList(env.NATS_URL), name: 'key-service' } },
        NatsClientConnection,
        KeyEventsPublisher,
        PlanPolicy,
        AccountsRepository,
        AccountsService,
        KeysRepository,
        KeysService,
        KeyBudgets,
        ProxyKeysRepository,
        ProxyKeysService,
      ],
    };
  }
}
