import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queues } from '@gateway/contracts';
import { bullPrefix, GatewayMetrics, Metrics, RedisConnection } from '@gateway/platform';
import { Queue } from 'bullmq';
import type { Histogram } from 'prom-client';

export type VideoJobOutcome = 'completed' | 'failed';

const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * The video queue's metrics: its depth by state, read from BullMQ when scraped, and how long each
 * job took. The processor calls `observeVideoJob` once per job it finishes or fails.
 */
@Injectable()
export class VideoJobMetrics implements OnApplicationShutdown {
  private readonly queue: Queue;
  private readonly jobDuration: Histogram<'outcome'>;

  constructor(metrics: GatewayMetrics, redis: RedisConnection) {
    // A shared connection: BullMQ leaves closing it to RedisConnection.
    this.queue = new Queue(Queues.video, { connection: redis.client, prefix: bullPrefix(redis.topology) });
    this.jobDuration = metrics.histogram(Metrics.videoJobDuration);
    metrics.gauge(Metrics.videoQueueDepth, async (gauge) => {
      const counts = await this.queue.getJobCounts(...COUNTED_STATES).catch(() => undefined);
      for (const state of COUNTED_STATES) if (counts) gauge.set({ state }, counts[state] ?? 0);
    });
  }

  observeVideoJob(durationSeconds: number, outcome: VideoJobOutcome): void {
    this.jobDuration.observe({ outcome }, durationSeconds);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }
}
