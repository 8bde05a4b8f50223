import { DynamicModule, Logger, Module } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { Rpc } from '@gateway/contracts';
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
import { ROUTING_REDIS, RouteBreakers, RouteQuotas, RoutingRedis } from '@gateway/routing';
import { createObjectStore, OBJECT_STORE } from '@gateway/storage';
import { ProviderRegistry } from '@gateway/providers';
import { VideoGenerationService } from './generation/video-generation.service';
import { VideoJobsProcessor } from './generation/video-jobs.processor';
import { VideoUsagePublisher } from './usage/video-usage.publisher';
import { VideoJobMetrics } from './observability/video-job.metrics';
import { VideoWorkerEnv } from './video-worker.env';

/** BullMQ processor for video jobs; its own process and Deployment. */
@Module({})
export class VideoWorkerModule {
  static forRoot(env: VideoWorkerEnv): DynamicModule {
    const logger = new Logger('ModelCatalog');
    const catalog = ModelCatalog.fromFile(env.MODELS_CONFIG, process.env, (message) => logger.warn(message));
    return {
      module: VideoWorkerModule,
      controllers: [HealthController, healthRpcController(Rpc.health('video-worker'))],
      providers: [
        { provide: REDIS_TOPOLOGY, useValue: redisTopology(env) },
        { provide: JETSTREAM_SERVERS, useValue: splitList(env.NATS_URL) },
        { provide: ModelCatalog, useValue: catalog },
        { provide: OBJECT_STORE, useValue: createObjectStore(env) },
        // The worker's one configuration object: services inject it and read their variables from it.
        { provide: VideoWorkerEnv, useValue: env },
        RedisConnection,
        // Route breakers and quotas, shared with the router replicas (same Redis, same keys).
        { provide: ROUTING_REDIS, useValue: redisTopology(env) },
        RoutingRedis,
        RouteBreakers,
        RouteQuotas,
        VideoJobMetrics,
        JetStreamConnection,
        // The router's provider adapters: their video methods.
        { provide: ProviderRegistry, useFactory: () => new ProviderRegistry() },
        VideoUsagePublisher,
        VideoGenerationService,
        VideoJobsProcessor,
        {
          provide: READINESS_CHECKS,
          inject: [RedisConnection, JetStreamConnection, VideoJobsProcessor],
          useFactory: (redis: RedisConnection, jetstream: JetStreamConnection, processor: VideoJobsProcessor): ReadinessCheck[] => [
            { name: 'redis', check: () => redis.isReachable() },
            { name: 'jetstream', check: () => jetstream.isReachable() },
            { name: 'queue', check: async () => processor.isRunning() },
          ],
        },
      ],
    };
  }
}
