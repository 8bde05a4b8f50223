import { BaseEnv, WithRedisTopology } from '@gateway/platform';
import { WithObjectStoreEnv } from '@gateway/storage';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';

export class VideoWorkerEnv extends WithObjectStoreEnv(WithRedisTopology(BaseEnv)) {
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** The model catalog: which adapter, upstream and options serve each video model. */
  @IsString()
  MODELS_CONFIG = 'config/models.yaml';

  /** Jobs one worker process runs at a time. */
  @IsInt()
  @Min(1)
  @Max(64)
  VIDEO_CONCURRENCY: number = 2;

  /**
   * How long a job's lock holds without renewal (renewed every half of it): a worker that dies
   * mid-job has its job taken over by another worker within about twice this.
   */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  VIDEO_LOCK_MS: number = 30_000;
}
