import { DynamicModule, Logger, Module } from '@nestjs/common';
import { Rpc } from '@gateway/contracts';
import {
  HealthController,
  healthRpcController,
  JETSTREAM_SERVERS,
  JetStreamConnection,
  NatsRpcClient,
  READINESS_CHECKS,
  ReadinessCheck,
  splitList,
  redisTopology,
} from '@gateway/platform';
import { ModelCatalog } from '@gateway/catalog';
import { assertCatalogServable, ProviderRegistry } from '@gateway/providers';
import { DecisionController } from './decisions/decision.controller';
import { DecisionEngine } from './decisions/decision-engine';
import { DecisionService } from './decisions/decision.service';
import { RouterMetrics } from './observability/router-metrics';
import { RouterEnv } from './router.env';
import { ReasoningSealer, reasoningSealer } from './text-generation/reasoning-seal';
import { InflightRequests } from './text-generation/inflight-requests';
import { TextGenerationController } from './text-generation/text-generation.controller';
import { TextGenerationService } from './text-generation/text-generation.service';
import { RouterLiveness } from './liveness/router-liveness';
import { PROVIDER_ADAPTERS, RETRY_POLICY, UpstreamCaller } from './providers/upstream-caller';
import { UsagePublisher } from './usage/usage.publisher';
import { ROUTING_REDIS, RouteBreakers, RouteQuotas, RoutingRedis } from '@gateway/routing';
import { createObjectStore, OBJECT_STORE } from '@gateway/storage';
import { EmbeddingsController } from './embeddings/embeddings.controller';
import { EmbeddingsService } from './embeddings/embeddings.service';
import { ImagesController } from './images/images.controller';
import { ImagesService } from './images/images.service';
import { AudioController } from './audio/audio.controller';
import { TranscriptionsService } from './audio/transcriptions.service';
import { MediaCalls } from './media/media-call';
import { MeteredCalls } from './metering/metered-calls';
import { FramedCalls } from './metering/framed-calls';
import { ModerationsController } from './moderations/moderations.controller';
import { ModerationsService } from './moderations/moderations.service';
import { STORE_CLIENT, StoredResponsesClient } from './stored-responses/stored-responses.client';
import { TokenCountingController } from './token-counting/token-counting.controller';
import { TokenCountingService } from './token-counting/token-counting.service';
import { SpeechController } from './speech/speech.controller';
import { SpeechService } from './speech/speech.service';

/** The router's NATS handlers; each replica subscribes those of its families (`servesSubject`). */
export const ROUTER_CONTROLLERS = [
  TextGenerationController,
  DecisionController,
  HealthController,
  healthRpcController(Rpc.health('inference-router')),
  EmbeddingsController,
  ModerationsController,
  ImagesController,
  AudioController,
  TokenCountingController,
  SpeechController,
];

/** Model catalog, provider adapters and format translation. */
@Module({})
export class InferenceRouterModule {
  static forRoot(env: RouterEnv): DynamicModule {
    const logger = new Logger('ModelCatalog');
    const catalog = ModelCatalog.fromFile(env.MODELS_CONFIG, process.env, (message) => logger.warn(message));
    logger.log(`serving ${catalog.list().length} models from ${env.MODELS_CONFIG}`);
    new Logger('RouterFamilies').log(`serving the families ${env.ROUTER_FAMILIES.join(', ')} (ROUTER_FAMILIES)`);
    return {
      module: InferenceRouterModule,
      imports: [],
      controllers: ROUTER_CONTROLLERS,
      providers: [
        { provide: ModelCatalog, useValue: catalog },
        { provide: STORE_CLIENT, useFactory: (connection: JetStreamConnection) => new NatsRpcClient(connection), inject: [JetStreamConnection] },
        { provide: JETSTREAM_SERVERS, useValue: splitList(env.NATS_URL) },
        {
          provide: RETRY_POLICY,
          useValue: {
            attemptsPerRoute: env.UPSTREAM_ATTEMPTS,
            baseDelayMs: env.UPSTREAM_RETRY_BASE_MS,
            retryAfterMaxWaitMs: env.UPSTREAM_RETRY_AFTER_MAX_WAIT_MS,
          },
        },
        // The router's one configuration object: services inject it and read their variables from it.
        { provide: RouterEnv, useValue: env },
        { provide: ReasoningSealer, useValue: reasoningSealer(env.REASONING_SEAL_KEY, env.REASONING_SEAL_KEYS) },
        {
          provide: ProviderRegistry,
          useFactory: () => new ProviderRegistry({ simulatorTokenDelayMs: env.SIMULATOR_TOKEN_DELAY_MS, upstreamMaxConnections: env.UPSTREAM_MAX_CONNECTIONS }),
        },
        {
          provide: PROVIDER_ADAPTERS,
          inject: [ProviderRegistry],
          useFactory: (adapters: ProviderRegistry) => {
            assertCatalogServable(catalog, adapters.byName);
            return adapters.byName;
          },
        },
        {
          provide: READINESS_CHECKS,
          inject: [JetStreamConnection],
          useFactory: (jetstream: JetStreamConnection): ReadinessCheck[] => [{ name: 'jetstream', check: () => jetstream.isReachable() }],
        },
        JetStreamConnection,
        NatsRpcClient,
        RouterLiveness,
        UsagePublisher,
        MeteredCalls,
        FramedCalls,
        InflightRequests,
        UpstreamCaller,
        // Empty REDIS_URL (and no cluster or sentinels): breakers and quotas per replica.
        ...(env.REDIS_URL || env.REDIS_CLUSTER_NODES || env.REDIS_SENTINELS ? [{ provide: ROUTING_REDIS, useValue: redisTopology(env) }] : []),
        RoutingRedis,
        RouteBreakers,
        RouteQuotas,
        StoredResponsesClient,
        TextGenerationService,
        DecisionEngine,
        DecisionService,
        RouterMetrics,
        { provide: OBJECT_STORE, useValue: createObjectStore(env) },
        MediaCalls,
        EmbeddingsService,
        ModerationsService,
        ImagesService,
        TranscriptionsService,
        SpeechService,
        TokenCountingService,
      ],
    };
  }
}
