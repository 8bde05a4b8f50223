import { DynamicModule, Global, Logger, LogLevel, Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { GracefulShutdown } from './graceful-shutdown';
import { createJsonLogger, JsonLoggerService } from './logging';
import { MetricsController } from './metrics.controller';
import { startTracing, TracingHandle } from './tracing';

/**
 * The metrics registry, the shutdown state and the JSON logger, for every provider of the app.
 * `metricsEndpoint` serves `/metrics` (back-end services, on their health port; the edge serves
 * its own, public one).
 */
@Global()
@Module({})
export class ObservabilityModule {
  static forRoot({ metricsEndpoint, logger }: { metricsEndpoint: boolean; logger: JsonLoggerService }): DynamicModule {
    return {
      module: ObservabilityModule,
      controllers: metricsEndpoint ? [MetricsController] : [],
      providers: [GatewayMetrics, GracefulShutdown, { provide: JsonLoggerService, useValue: logger }],
      exports: [GatewayMetrics, GracefulShutdown, JsonLoggerService],
    };
  }
}

export interface Observability {
  logger: JsonLoggerService;
  tracing: TracingHandle;
}

let current: Promise<Observability> | undefined;

/**
 * JSON logs and tracing for the process, set up first thing in an app's entrypoint so that even the
 * lines logged while its modules are built are JSON. Idempotent: the first call's settings stay.
 */
export function setupObservability(service: string, logLevel: LogLevel): Promise<Observability> {
  current ??= (async () => {
    const logger = new JsonLoggerService(createJsonLogger(service, logLevel));
    // Nest's `new Logger(...)` instances, wherever created, now write through pino.
    Logger.overrideLogger(logger);
    return { logger, tracing: await startTracing(service) };
  })();
  return current;
}
