import { DynamicModule, Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { healthSubject } from '@gateway/contracts';
import { postgresReadinessProvider, PrismaModule } from '@gateway/db';
import { HealthController, healthRpcController, NATS_RECONNECT_OPTIONS, splitList } from '@gateway/platform';
import { AccountsRepository } from './accounts/accounts.repository';
import { AccountsService } from './accounts/accounts.service';
import { PLAN_DAILY_LIMITS, PlanPolicy } from './accounts/plan-policy';
import { KeyServiceEnv, parsePlanAmounts } from './config/key-service.env';
import { decodeEncryptionKey, ENCRYPTION_KEY, KeyCryptoService } from './crypto/key-crypto.service';
import { KeyEventsPublisher, NATS_CLIENT } from './events/key-events.publisher';
import { KeysController } from './keys/keys.controller';
import { KeysRepository } from './keys/keys.repository';
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
      imports: [
        PrismaModule.forRoot(env.DATABASE_URL),
        ClientsModule.register([
          { name: NATS_CLIENT, transport: Transport.NATS, options: { servers: splitList(env.NATS_URL), name: 'key-service', ...NATS_RECONNECT_OPTIONS } },
        ]),
      ],
      controllers: withTransports ? [KeysController, ProxyKeysController, HealthController, healthRpcController(healthSubject('key-service'))] : [],
      providers: [
        { provide: ENCRYPTION_KEY, useValue: decodeEncryptionKey(env.KEY_ENCRYPTION_KEY) },
        { provide: PLAN_DAILY_LIMITS, useValue: parsePlanAmounts(env.PLAN_DAILY_LIMITS) },
        postgresReadinessProvider,
        KeyCryptoService,
        KeyEventsPublisher,
        PlanPolicy,
        AccountsRepository,
        AccountsService,
        KeysRepository,
        KeysService,
        ProxyKeysRepository,
        ProxyKeysService,
      ],
    };
  }
}
