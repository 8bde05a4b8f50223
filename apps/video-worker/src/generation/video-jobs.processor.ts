import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { encodeVideoJobFailure, Queues, VideoJobData, VideoJobFailure, VideoJobResult, VideoJobs } from '@gateway/contracts';
import {
  bullPrefix,
  createBullConnection,
  firstFieldProblem,
  GracefulShutdown,
  RedisClient,
  RedisConnection,
  runWithExtractedContext,
} from '@gateway/platform';
import { Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { VideoJobError } from '@gateway/providers';
import { VideoJobMetrics } from '../observability/video-job.metrics';
import { VideoGenerationService } from './video-generation.service';
import { VideoWorkerEnv } from '../video-worker.env';

type VideoJobName = (typeof VideoJobs)[keyof typeof VideoJobs];
type JobHandler = (job: Job, signal: AbortSignal, token?: string) => Promise<unknown>;

/**
 * How many times a job may lose its worker (crash, kill) and still be taken over by another; each
 * loss is detected when its lock expires.
 */
const MAX_STALLED = 2;

/**
 * The BullMQ processor of the video queue: binds `Queues.video` and each `VideoJobs` name to its
 * handler, and refuses to boot when a job name has none. A failure's reason is what the client
 * reads (see encodeVideoJobFailure); the last failed attempt publishes the job's `error` usage
 * event. On SIGTERM the worker takes no new job and finishes the running ones within the grace
 * period; a job still running when it is over is handed back to the queue (moved to wait, neither
 * failed nor counted as stalled), where another worker resumes it at once.
 */
@Injectable()
export class VideoJobsProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(VideoJobsProcessor.name);
  /** Aborted when the grace period is over: running jobs go back to the queue. */
  private readonly shutdown = new AbortController();
  private readonly handlers: Record<VideoJobName, JobHandler>;
  private worker?: Worker;
  private connection?: RedisClient;
  private closing?: Promise<void>;

  constructor(
    @Inject(VideoWorkerEnv) private readonly env: Pick<VideoWorkerEnv, 'VIDEO_CONCURRENCY' | 'VIDEO_LOCK_MS'>,
    private readonly redis: RedisConnection,
    private readonly generation: VideoGenerationService,
    private readonly metrics: VideoJobMetrics,
    private readonly lifecycle: GracefulShutdown,
  ) {
    this.handlers = { [VideoJobs.generate]: (job, signal, token) => this.generate(job, signal, token) };
  }

  onApplicationBootstrap(): void {
    const missing = Object.values(VideoJobs).filter((name) => typeof this.handlers[name] !== 'function');
    if (missing.length > 0) throw new Error(`queue ${Queues.video}: no processor for job(s) ${missing.join(', ')}`);
    this.connection = createBullConnection(this.redis.topology);
    this.connection.on('error', () => undefined);
    this.worker = new Worker(Queues.video, (job, token, signal) => this.process(job, token, signal), {
      connection: this.connection,
      prefix: bullPrefix(this.redis.topology),
      concurrency: this.env.VIDEO_CONCURRENCY,
      lockDuration: this.env.VIDEO_LOCK_MS,
      stalledInterval: this.env.VIDEO_LOCK_MS,
      maxStalledCount: MAX_STALLED,
    });
    this.worker.on('error', (error) => this.logger.error(`queue ${Queues.video}: ${error.message}`));
    this.worker.on('stalled', (jobId) => this.logger.warn(`video job ${jobId} lost its worker; it runs again`));
    // Draining: no new jobs; the running ones may finish within the grace period.
    this.lifecycle.onDrain('video jobs', () => this.closeWorker());
  }

  private closeWorker(): Promise<void> {
    this.closing ??= (this.worker?.close() ?? Promise.resolve()).finally(() => this.connection?.quit().catch(() => undefined));
    return this.closing;
  }

  isRunning(): boolean {
    return this.worker?.isRunning() ?? false;
  }

  /** After the drain: jobs still running (the grace period is over) are handed back, then the worker closes. */
  async onApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    this.shutdown.abort(new Error('video-worker is shutting down'));
    await this.closeWorker();
  }

  private async process(job: Job, token: string | undefined, bullSignal?: AbortSignal): Promise<unknown> {
    const handler = this.handlers[job.name as VideoJobName];
    if (!handler) {
      throw new UnrecoverableError(encodeVideoJobFailure({ code: 'unknown_job', message: `No processor for video job ${job.name}` }));
    }
    const signal = bullSignal ? AbortSignal.any([this.shutdown.signal, bullSignal]) : this.shutdown.signal;
    const started = performance.now();
    // The job runs in the trace of the request that created it (its context travels in the job data).
    const carrier = (job.data as { traceContext?: Record<string, string> } | undefined)?.traceContext;
    try {
      const result = await runWithExtractedContext(carrier, () => handler(job, signal, token), `${Queues.video} process`);
      this.metrics.observeVideoJob((performance.now() - started) / 1000, 'completed');
      return result;
    } catch (error) {
      // A job handed back at shutdown is not a failure: another worker runs it.
      if (!this.shutdown.signal.aborted) this.metrics.observeVideoJob((performance.now() - started) / 1000, 'failed');
      throw error;
    }
  }

  private async generate(job: Job, signal: AbortSignal, token?: string): Promise<VideoJobResult> {
    const data = plainToInstance(VideoJobData, job.data);
    const problem = firstFieldProblem(validateSync(data));
    if (problem) {
      throw new UnrecoverableError(encodeVideoJobFailure({ code: 'invalid_job', message: `Invalid video job: ${problem.message}` }));
    }
    const running = {
      id: String(job.id),
      data,
      updateProgress: (progress: object) => job.updateProgress(progress),
      updateData: async (next: VideoJobData) => {
        await job.updateData(next);
        running.data = next;
      },
    };
    try {
      await job.updateProgress({ status: 'in_progress', progress: 0 });
      return await this.generation.generate(running, signal);
    } catch (error) {
      if (this.shutdown.signal.aborted) {
        // Handed back: waiting again for the next worker, without using up an attempt.
        await job.moveToWait(token);
        this.logger.log(`video job ${job.id} handed back to the queue at shutdown`);
        throw new WaitingError();
      }
      const { failure, retryable } = this.describe(job, error);
      const lastAttempt = !retryable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.warn(`video job ${job.id} attempt ${job.attemptsMade + 1} failed (${failure.code}): ${failure.message}${lastAttempt ? '' : '; retrying'}`);
      if (lastAttempt) await this.generation.recordFailure(data);
      const reason = encodeVideoJobFailure(failure);
      throw retryable ? new Error(reason) : new UnrecoverableError(reason);
    }
  }

  private describe(job: Job, error: unknown): { failure: VideoJobFailure; retryable: boolean } {
    if (error instanceof VideoJobError) return { failure: { code: error.code, message: error.message }, retryable: error.retryable };
    this.logger.error(`video job ${job.id} failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    return {
      failure: { code: 'internal_error', message: `Video generation failed unexpectedly; quote the job id ${job.id} when reporting it` },
      retryable: true,
    };
  }
}
