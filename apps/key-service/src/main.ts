import 'reflect-metadata';
import { QueueGroups } from '@gateway/contracts';
import { bootstrapService, loadEnvOrExit } from '@gateway/platform';
import { KeyServiceModule } from './app.module';
import { KeyServiceEnv } from './config/key-service.env';

async function main(): Promise<void> {
  const env = loadEnvOrExit(KeyServiceEnv, 'key-service');
  await bootstrapService({
    name: 'key-service',
    module: KeyServiceModule.forRoot(env),
    natsUrl: env.NATS_URL,
    queue: QueueGroups['key-service'],
    healthPort: env.HEALTH_PORT,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
  });
}

void main();
