import 'reflect-metadata';
import { QueueGroups } from '@gateway/contracts';
import { bootstrapService, loadEnvOrExit, setupObservability } from '@gateway/platform';
import { InferenceRouterModule } from './app.module';
import { CatalogError } from '@gateway/catalog';
import { RouterEnv } from './router.env';
import { servesSubject } from './families/router-families';

async function main(): Promise<void> {
  const env = loadEnvOrExit(RouterEnv, 'inference-router');
  // Before the module is built: loading the catalog logs.
  await setupObservability('inference-router', env.LOG_LEVEL);
  let module;
  try {
    module = InferenceRouterModule.forRoot(env);
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    console.error(`[inference-router] ${error.message}`);
    process.exit(1);
  }
  await bootstrapService({
    name: 'inference-router',
    module,
    natsUrl: env.NATS_URL,
    queue: QueueGroups['inference-router'],
    serves: servesSubject(env.ROUTER_FAMILIES),
    healthPort: env.HEALTH_PORT,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
  });
}

void main();
