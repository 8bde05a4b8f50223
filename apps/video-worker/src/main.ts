import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { QueueGroups } from '@gateway/contracts';
import { bootstrapService, loadEnvOrExit } from '@gateway/platform';
import { VideoWorkerModule } from './app.module';
import { VideoWorkerEnv } from './video-worker.env';

async function main(): Promise<void> {
  const env = loadEnvOrExit(VideoWorkerEnv, 'video-worker');
  let module;
  try {
    module = VideoWorkerModule.forRoot(env);
  } catch (error) {
    new Logger('video-worker').error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  await bootstrapService({
    name: 'video-worker',
    module,
    natsUrl: env.NATS_URL,
    queue: QueueGroups['video-worker'],
    healthPort: env.HEALTH_PORT,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
  });
}

void main();
