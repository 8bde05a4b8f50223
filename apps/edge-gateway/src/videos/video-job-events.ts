import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { decodeVideoJobFailure, Queues, VideoJobFailure, VideoJobProgress, VideoJobResult } from '@gateway/contracts';
import { bullPrefix, createBullConnection, RedisClient, RedisConnection } from '@gateway/platform';
import { QueueEvents } from 'bullmq';

export type VideoJobEvent =
  { type: 'progress'; progress: VideoJobProgress } | { type: 'completed'; result: VideoJobResult } | { type: 'failed'; failure: VideoJobFailure };

export type VideoJobListener = (event: VideoJobEvent) => void;

const isProgress = (value: unknown): value is VideoJobProgress =>
  typeof value === 'object' && value !== null && typeof (value as VideoJobProgress).progress === 'number';

/**
 * The video queue's events as this edge replica sees them: one BullMQ QueueEvents reader (a Redis
 * stream every replica reads), fanned out to the streams attached to each job here. Whichever
 * replica created a job, any replica can follow it.
 */
@Injectable()
export class VideoJobEvents implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(VideoJobEvents.name);
  private readonly listeners = new Map<string, Set<VideoJobListener>>();
  private events?: QueueEvents;

  private connection?: RedisClient;

  constructor(private readonly redis: RedisConnection) {}

  async onModuleInit(): Promise<void> {
    this.connection = createBullConnection(this.redis.topology);
    this.connection.on('error', () => undefined);
    const events = new QueueEvents(Queues.video, { connection: this.connection, prefix: bullPrefix(this.redis.topology) });
    events.on('error', (error) => this.logger.error(`queue ${Queues.video} events: ${(error as Error).message}`));
    events.on('progress', ({ jobId, data }) => {
      if (isProgress(data)) this.emit(jobId, { type: 'progress', progress: data });
    });
    // Waiting again: a retry after a failed attempt, or a job whose worker died.
    const requeued = (jobId: string) => this.emit(jobId, { type: 'progress', progress: { status: 'queued', progress: 0 } });
    events.on('delayed', ({ jobId }) => requeued(jobId));
    events.on('stalled', ({ jobId }) => requeued(jobId));
    events.on('completed', ({ jobId, returnvalue }) => this.emit(jobId, { type: 'completed', result: returnvalue as unknown as VideoJobResult }));
    events.on('failed', ({ jobId, failedReason }) => this.emit(jobId, { type: 'failed', failure: decodeVideoJobFailure(failedReason) }));
    await events.waitUntilReady();
    this.events = events;
  }

  /** Calls `listener` with every later event of the job; returns the unsubscribe function. */
  subscribe(jobId: string, listener: VideoJobListener): () => void {
    let set = this.listeners.get(jobId);
    if (!set) {
      set = new Set();
      this.listeners.set(jobId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(jobId) === set) this.listeners.delete(jobId);
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.events?.close().catch(() => undefined);
    await this.connection?.quit().catch(() => undefined);
  }

  private emit(jobId: string, event: VideoJobEvent): void {
    for (const listener of this.listeners.get(jobId) ?? []) listener(event);
  }
}
