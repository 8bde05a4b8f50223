import { DynamicModule, Logger, Module } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { Rpc } from '@gateway/contracts';
import { PrismaModule, PrismaService } from '@gateway/db';
import {
  HealthController,
  healthRpcController,
  JETSTREAM_SERVERS,
  JetStreamConnection,
  READINESS_CHECKS,
  ReadinessCheck,
  REDIS_TOPOLOGY,
  redisTopology,
  RedisConnection,
  splitList,
} from '@gateway/platform';
import { LedgerRepository } from './ledger/ledger.repository';
import { UsageConsumer } from './ledger/usage.consumer';
import { MeteringEnv } from './metering.env';

/** Consumes usage events from JetStream into the ledger: logs, credits, proxy-key spend, counters. */
@Module({})
export class MeteringServiceModule {
  static forRoot(env: MeteringEnv): DynamicModule {
    const logger = new Logger('ModelCatalog');
    const catalog = ModelCatalog.fromFile(env.MODELS_CONFIG, process.env, (message) => logger.warn(message), {
      // Prices and budgets cover every model the router may serve; only the router holds provider keys.
      requireCredentials: false,
    });
    return {
      module: MeteringServiceModule,
      imports: [PrismaModule.forRoot(env.DATABASE_URL)],
      controllers: [HealthController, healthRpcController(Rpc.health('metering-service'))],
      providers: [
        { provide: ModelCatalog, useValue: catalog },
        { provide: JETSTREAM_SERVERS, useValue: splitList(env.NATS_URL) },
        JetStreamConnection,
        { provide: REDIS_TOPOLOGY, useValue: redisTopology(env) },
        RedisConnection,
        // The service's one configuration object: services inject it and read their variables from it.
        { provide: MeteringEnv, useValue: env },
        LedgerRepository,
        UsageConsumer,
        {
          provide: READINESS_CHECKS,
          inject: [PrismaService, JetStreamConnection],
          useFactory: (prisma: PrismaService, jetstream: JetStreamConnection): ReadinessCheck[] => [
            { name: 'postgresql', check: () => prisma.isReachable() },
            { name: 'jetstream', check: () => jetstream.isReachable() },
          ],
        },
      ],
    };
  }
}
