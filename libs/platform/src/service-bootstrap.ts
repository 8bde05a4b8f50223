import { DynamicModule, INestApplication, Logger, LogLevel, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CustomStrategy } from '@nestjs/microservices';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { splitList } from './config';
import { NATS_RECONNECT_OPTIONS } from './connection-resilience';
import { DtoValidationPipe, RpcDomainExceptionFilter } from './rpc';
import { closeOnShutdownSignals, GracefulShutdown, ObservabilityModule, setupObservability } from './observability';
import { NatsTransportServer } from './nats-transport/server';

export interface ServiceBootstrapOptions {
  name: string;
  module: Type<unknown> | DynamicModule;
  natsUrl: string;
  /** Queue group for request subjects; omitted for a service that only publishes. */
  queue?: string;
  /** Which of its handlers' subjects this replica subscribes (all when omitted): see `NatsTransportOptions.serves`. */
  serves?: (subject: string) => boolean;
  healthPort: number;
  logLevel: LogLevel;
  /** How long in-flight work may take to finish on SIGTERM (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs?: number;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

/**
 * Starts a back-end service: its NATS handlers in a queue group, and a small HTTP server for
 * `/healthz`, `/readyz` and `/metrics`. SIGTERM drains it (see GracefulShutdown) and closes it.
 */
export async function bootstrapService(options: ServiceBootstrapOptions): Promise<INestApplication> {
  await setupObservability(options.name, options.logLevel);
  const logger = new Logger(options.name);
  try {
    return await startService(options, logger);
  } catch (error) {
    logger.error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
}

async function startService(options: ServiceBootstrapOptions, logger: Logger): Promise<INestApplication> {
  const { logger: jsonLogger, tracing } = await setupObservability(options.name, options.logLevel);
  @Module({ imports: [ObservabilityModule.forRoot({ metricsEndpoint: true, logger: jsonLogger }), options.module] })
  class ServiceRootModule {}

  const app = await NestFactory.create<NestFastifyApplication>(ServiceRootModule, new FastifyAdapter(), {
    logger: jsonLogger,
    bufferLogs: false,
  });
  const shutdown = app.get(GracefulShutdown);
  // Registered before the microservice is connected, which copies the app's config.
  app.useGlobalPipes(new DtoValidationPipe());
  app.useGlobalFilters(new RpcDomainExceptionFilter());
  const server = new NatsTransportServer({
    servers: splitList(options.natsUrl),
    ...NATS_RECONNECT_OPTIONS,
    queue: options.queue,
    serves: options.serves,
    name: options.name,
    // Each handled message's server span and work-in-progress count (no Nest interceptor: see there).
    observability: shutdown,
  });
  app.connectMicroservice<CustomStrategy>({ strategy: server }, { inheritAppConfig: true });
  // First of the drain tasks: new requests go to the other replicas of the queue group.
  shutdown.onDrain('nats subscriptions', () => server.stopListening());
  closeOnShutdownSignals(app, {
    graceMs: options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
    logger: jsonLogger,
    afterClose: () => tracing.shutdown(),
  });
  // Every module initialised (connections made: JetStream, Redis, the database) before the first
  // request is taken: a router must not serve what it cannot yet record. Nest's hybrid app would
  // otherwise start the NATS handlers first and initialise the modules in listen().
  await app.init();
  await app.startAllMicroservices();
  await app.listen(options.healthPort, '0.0.0.0');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : options.healthPort;
  logger.log(`ready: NATS ${options.natsUrl}${options.queue ? ` (queue ${options.queue})` : ''}, health on :${port}`);
  return app;
}
