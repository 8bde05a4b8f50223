import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queues, VideoJobData, VideoJobs } from '@gateway/contracts';
import { bullPrefix, RedisConnection } from '@gateway/platform';
import { Job, Queue } from 'bullmq';

/** Attempts per job; a worker that dies mid-job does not use one up (BullMQ stalled-job recovery). */
export const VIDEO_JOB_ATTEMPTS = 3;
const RETRY_BASE_DELAY_MS = 5000;
/** Finished jobs stay attachable (GET /v1/videos/generations/{id}) this long. */
export const VIDEO_JOB_RETENTION_S = { completed: 24 * 3600, failed: 7 * 24 * 3600 };
const RETAINED_JOBS = 10_000;

/**
 * Adds video jobs to the queue the video-worker processes. The job id is the request id: the
 * re-attach route takes it, and the worker's usage event carries it.
 */
@Injectable()
export class VideoJobsProducer implements OnApplicationShutdown {
  private readonly queue: Queue<VideoJobData>;

  constructor(redis: RedisConnection) {
    this.queue = new Queue<VideoJobData>(Queues.video, { connection: redis.client, prefix: bullPrefix(redis.topology) });
  }

  async add(data: VideoJobData): Promise<void> {
    await this.queue.add(VideoJobs.generate, data, {
      jobId: data.caller.requestId,
      attempts: VIDEO_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: RETRY_BASE_DELAY_MS },
      removeOnComplete: { age: VIDEO_JOB_RETENTION_S.completed, count: RETAINED_JOBS },
      removeOnFail: { age: VIDEO_JOB_RETENTION_S.failed, count: RETAINED_JOBS },
    });
  }

  async get(jobId: string): Promise<Job<VideoJobData> | undefined> {
    return (await this.queue.getJob(jobId)) as Job<VideoJobData> | undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }
}
