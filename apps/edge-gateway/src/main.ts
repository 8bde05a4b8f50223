import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { CustomStrategy } from '@nestjs/microservices';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { closeOnShutdownSignals, loadEnvOrExit, NATS_RECONNECT_OPTIONS, NatsTransportServer, setupObservability, splitList } from '@gateway/platform';
import { EdgeModule } from './app.module';
import { EdgeEnv } from './config/edge.env';
import { configureEdgeApp, createEdgeHttp } from './http/edge-http';
import { RequestObserver } from './observability/request-observer';
import { ResponsesSockets } from './responses-socket/responses-sockets';
import { VideosService } from './videos/videos.service';
import { apiRoutes, undocumentedRoutes } from './openapi/route-coverage';

async function main(): Promise<void> {
  const env = loadEnvOrExit(EdgeEnv, 'edge-gateway');
  const { logger, tracing } = await setupObservability('edge-gateway', env.LOG_LEVEL);
  const { adapter, routes } = createEdgeHttp(env);
  const app = await NestFactory.create<NestFastifyApplication>(EdgeModule.forRoot(env, logger), adapter, {
    logger,
    bodyParser: false,
  });
  app.get(RequestObserver).register(adapter.getInstance());
  // The Responses API's WebSocket mode takes the server's upgrades.
  app.get(ResponsesSockets).attach(app.getHttpServer(), adapter.getInstance());
  const document = configureEdgeApp(app);
  // No queue group: every edge replica receives every key-change event.
  app.connectMicroservice<CustomStrategy>({
    strategy: new NatsTransportServer({ servers: splitList(env.NATS_URL), name: 'edge-gateway-events', ...NATS_RECONNECT_OPTIONS }),
  });
  closeOnShutdownSignals(app, {
    graceMs: env.SHUTDOWN_GRACE_MS,
    logger,
    // Streams still open when the grace period ends are cut rather than holding the process.
    afterDrain: async (completed) => {
      if (completed) return;
      // Video streams end cleanly, so their clients re-attach elsewhere; then what is left is cut.
      app.get(VideosService).endOpenStreams();
      await new Promise((resolve) => setTimeout(resolve, 100));
      app.getHttpServer().closeAllConnections();
    },
    afterClose: () => tracing.shutdown(),
  });
  await app.startAllMicroservices();
  await app.listen(env.PORT, env.HOST);
  logger.log(`API routes: ${apiRoutes(routes).join(', ')}`, 'edge-gateway');
  const undocumented = undocumentedRoutes(routes, document);
  if (undocumented.length > 0) logger.warn(`API routes missing from the reference (/v1/openapi.json): ${undocumented.join(', ')}`, 'edge-gateway');
  logger.log(`listening on http://localhost:${env.PORT}/v1 (API reference: http://localhost:${env.PORT}/docs)`, 'edge-gateway');
}

main().catch((error: Error) => {
  console.error(JSON.stringify({ level: 'fatal', service: 'edge-gateway', msg: `failed to start: ${error.message}` }));
  process.exit(1);
});
