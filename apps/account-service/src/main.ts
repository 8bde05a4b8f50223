import 'reflect-metadata';
import { QueueGroups } from '@gateway/contracts';
import { bootstrapService, loadEnvOrExit } from '@gateway/platform';
import { AccountEnv } from './account.env';
import { AccountServiceModule } from './app.module';

async function main(): Promise<void> {
  const env = loadEnvOrExit(AccountEnv, 'account-service');
  await bootstrapService({
    name: 'account-service',
    module: AccountServiceModule.forRoot(env),
    natsUrl: env.NATS_URL,
    queue: QueueGroups['account-service'],
    healthPort: env.HEALTH_PORT,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
  });
}

void main();
