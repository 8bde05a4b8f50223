import 'reflect-metadata';
import { CatalogError } from '@gateway/catalog';
import { QueueGroups } from '@gateway/contracts';
import { bootstrapService, loadEnvOrExit, setupObservability } from '@gateway/platform';
import { MeteringServiceModule } from './app.module';
import { MeteringEnv } from './metering.env';

async function main(): Promise<void> {
  const env = loadEnvOrExit(MeteringEnv, 'metering-service');
  // Before the module is built: loading the catalog logs.
  await setupObservability('metering-service', env.LOG_LEVEL);
  let module;
  try {
    module = MeteringServiceModule.forRoot(env);
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    console.error(`[metering-service] ${error.message}`);
    process.exit(1);
  }
  await bootstrapService({
    name: 'metering-service',
    module,
    natsUrl: env.NATS_URL,
    queue: QueueGroups['metering-service'],
    healthPort: env.HEALTH_PORT,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
  });
}

void main();
