import { DynamicModule, Logger, Module } from '@nestjs/common';
import { BudgetStore } from '@gateway/billing';
import { ModelCatalog } from '@gateway/catalog';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { Rpc } from '@gateway/contracts';
import {
  DtoValidationPipe,
  JetStreamConnection,
  JETSTREAM_SERVERS,
  JsonLoggerService,
  ObservabilityModule,
  READINESS_CHECKS,
  ReadinessCheck,
  REDIS_TOPOLOGY,
  redisTopology,
  RedisConnection,
  splitList,
  NatsRpcClient,
} from '@gateway/platform';
import { ApiKeyGuard } from './auth/api-key.guard';
import { RevocationEpochs } from './auth/revocation-epochs';
import { BUDGET_CLOCK, BudgetService } from './billing/budget.service';
import { BudgetClock, TestClockController } from './billing/budget-clock';
import { BudgetRecovery } from './billing/budget-recovery';
import { AdmissionGuard } from './admission/admission.guard';
import { AuthCacheService } from './auth/auth-cache.service';
import { ConsoleSessionController } from './console-session/console-session.controller';
import { ConsoleSessions } from './console-session/console-sessions';
import { KeyEventsController } from './auth/key-events.controller';
import { KeyUsageTracker } from './auth/key-usage.tracker';
import { EdgeEnv } from './config/edge.env';
import { HttpExceptionFilter } from './errors/http-exception.filter';
import { EdgeHealthController } from './health/health.controller';
import { EdgeMetricsController } from './health/metrics.controller';
import { MasterKeyController } from './master-key/master-key.controller';
import { ServiceClient } from './nats/service-client';
import { RouterRelay } from './nats/router-relay';
import { ClientBacklog } from './nats/client-backlog';
import { UsageVoids } from './billing/usage-voids';
import { UsageRefusals } from './billing/usage-refusals';
import { RouterProbes } from './nats/router-liveness';
import { ProxyKeysController } from './proxy-keys/proxy-keys.controller';
import { ProxyKeysService } from './proxy-keys/proxy-keys.service';
import { KeyViewController } from './key-view/key-view.controller';
import { KeyViewService } from './key-view/key-view.service';
import { ModelsController } from './models/models.controller';
import { RequestObserver } from './observability/request-observer';
import { AccountController } from './account/account.controller';
import { DecisionsController } from './decisions/decisions.controller';
import { DecisionsService } from './decisions/decisions.service';
import { StoredResponsesController } from './stored-responses/stored-responses.controller';
import { ConversationsController } from './conversations/conversations.controller';
import { TextGenerationController } from './text-generation/text-generation.controller';
import { ResponsesSocketController } from './responses-socket/responses-socket.controller';
import { ResponsesSockets } from './responses-socket/responses-sockets';
import { TextGenerationService } from './text-generation/text-generation.service';
import { FilesController } from './files/files.controller';
import { createObjectStore, FileUrls, OBJECT_STORE } from '@gateway/storage';
import { EmbeddingsController } from './embeddings/embeddings.controller';
import { ImagesController } from './images/images.controller';
import { AudioController } from './audio/audio.controller';
import { MultipartUploadGuard } from './uploads/multipart-upload.guard';
import { MultipartUploads } from './uploads/multipart-uploads.service';
import { MediaRelayService } from './media/media-relay.service';
import { ModerationsController } from './moderations/moderations.controller';
import { VideosController } from './videos/videos.controller';
import { VideosService } from './videos/videos.service';
import { VideoJobEvents } from './videos/video-job-events';
import { VideoJobsProducer } from './videos/video-jobs.producer';
import { TokenCountingController } from './token-counting/token-counting.controller';
import { TokenCountingService } from './token-counting/token-counting.service';
import { SpeechController } from './speech/speech.controller';
import { SpeechService } from './speech/speech.service';
import { TranscriptionStreamService } from './audio/transcription-stream.service';

@Module({})
export class EdgeModule {
  static forRoot(env: EdgeEnv, logger: JsonLoggerService): DynamicModule {
    const catalogLogger = new Logger('ModelCatalog');
    const catalog = ModelCatalog.fromFile(env.MODELS_CONFIG, process.env, (message) => catalogLogger.warn(message), {
      // Prices and budgets cover every model the router may serve; only the router holds provider keys.
      requireCredentials: false,
    });
    const testClock = env.EDGE_TEST_CLOCK === 'true';
    if (testClock && process.env.NODE_ENV === 'production') throw new Error('EDGE_TEST_CLOCK=true is for tests only and refused with NODE_ENV=production');
    return {
      module: EdgeModule,
      imports: [ObservabilityModule.forRoot({ metricsEndpoint: false, logger })],
      controllers: [
        EdgeHealthController,
        EdgeMetricsController,
        KeyEventsController,
        ConsoleSessionController,
        ProxyKeysController,
        MasterKeyController,
        KeyViewController,
        ModelsController,
        AccountController,
        DecisionsController,
        TextGenerationController,
        ResponsesSocketController,
        StoredResponsesController,
        ConversationsController,
        FilesController,
        EmbeddingsController,
        ModerationsController,
        ImagesController,
        AudioController,
        VideosController,
        TokenCountingController,
        SpeechController,
        ...(testClock ? [TestClockController] : []),
      ],
      providers: [
        // The edge's one configuration object: services inject it and read their variables from it.
        { provide: EdgeEnv, useValue: env },
        { provide: REDIS_TOPOLOGY, useValue: redisTopology(env) },
        { provide: JETSTREAM_SERVERS, useValue: splitList(env.NATS_URL) },
        JetStreamConnection,
        BudgetClock,
        { provide: BUDGET_CLOCK, useFactory: (clock: BudgetClock) => () => new Date(clock.now()), inject: [BudgetClock] },
        // Every request and event carries the caller's trace context in its headers.
        { provide: NatsRpcClient, useFactory: (connection: JetStreamConnection) => new NatsRpcClient(connection), inject: [JetStreamConnection] },
        { provide: ModelCatalog, useValue: catalog },
        { provide: OBJECT_STORE, useValue: createObjectStore(env) },
        {
          provide: FileUrls,
          useValue: new FileUrls(env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}/v1`, env.FILE_URL_SECRET, env.FILE_URL_TTL_SECONDS),
        },
        { provide: BudgetStore, useFactory: (redis: RedisConnection) => new BudgetStore(redis.client), inject: [RedisConnection] },
        BudgetService,
        BudgetRecovery,
        {
          provide: READINESS_CHECKS,
          inject: [ServiceClient, RedisConnection, BudgetRecovery],
          useFactory: (services: ServiceClient, redis: RedisConnection, recovery: BudgetRecovery): ReadinessCheck[] => [
            { name: 'redis', check: () => redis.isReachable() },
            // Redis lost the budget's state and it is being rebuilt (metered requests answer 503 meanwhile).
            { name: 'budget', check: async () => recovery.warm },
            ...(['key-service', 'account-service'] as const).map((service) => ({
              name: service,
              check: async () => (await services.request(Rpc.health(service), {})).ready,
            })),
          ],
        },
        ApiKeyGuard,
        // The rate-limit guard asks this one to authenticate a request again (a stale revocation epoch).
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        // After authentication (guards run in registration order): multipart routes' files staged, their fields made the body.
        { provide: APP_GUARD, useClass: MultipartUploadGuard },
        // After authentication and uploads: the body is known.
        { provide: APP_GUARD, useClass: AdmissionGuard },
        { provide: APP_PIPE, useClass: DtoValidationPipe },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
        ServiceClient,
        RouterRelay,
        ClientBacklog,
        UsageVoids,
        UsageRefusals,
        RouterProbes,
        RequestObserver,
        RedisConnection,
        AuthCacheService,
        ConsoleSessions,
        RevocationEpochs,
        KeyUsageTracker,
        ProxyKeysService,
        KeyViewService,
        TextGenerationService,
        ResponsesSockets,
        DecisionsService,
        MediaRelayService,
        MultipartUploads,
        SpeechService,
        TranscriptionStreamService,
        VideoJobsProducer,
        VideoJobEvents,
        VideosService,
        TokenCountingService,
      ],
    };
  }
}
