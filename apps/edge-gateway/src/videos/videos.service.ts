import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { decodeVideoJobFailure, VideoGenerationBody, VideoJobData, VideoJobProgress, VideoJobResult } from '@gateway/contracts';
import { injectTraceContext } from '@gateway/platform';
import { FileUrls } from '@gateway/storage';
import type { Job } from 'bullmq';
import type { FastifyReply } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { callerContext } from '../auth/caller-context';
import { BudgetService } from '../billing/budget.service';
import { MeteredRequest } from '../admission/admission.guard';
import { MeteredRelay } from '../policy/metering.decorators';
import { VideoEventStream } from './video-event.stream';
import { failedEvent, progressEvent, VideoStreamEvent } from './video-events';
import { VideoJobEvent, VideoJobEvents } from './video-job-events';
import { VideoJobsProducer } from './video-jobs.producer';
import { isUsableJobId, planVideoRequest } from './video-request';
import { DomainError, ErrorCode } from '@gateway/errors';
import { EdgeEnv } from '../config/edge.env';

const isFinal = (event: VideoStreamEvent) => 'status' in event && (event.status === 'completed' || event.status === 'failed');

/** A job's events, buffered from before its stream opens so that none falls between "read state" and "listen". */
interface JobFollower {
  start(reply: FastifyReply, headers: Record<string, string>, first: VideoStreamEvent): Promise<void>;
  cancel(): void;
}

/**
 * Video generation at the edge: validates and prices the request, reserves its cost, queues the job
 * for the video-worker and streams the job's events; re-attaching streams any job of the caller's
 * account from any replica. A stream's end — the client leaving included — never cancels the job.
 */
@Injectable()
@MeteredRelay()
export class VideosService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(VideosService.name);
  private readonly open = new Set<() => void>();

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly producer: VideoJobsProducer,
    private readonly events: VideoJobEvents,
    private readonly budget: BudgetService,
    private readonly urls: FileUrls,
    @Inject(EdgeEnv) private readonly env: Pick<EdgeEnv, 'VIDEO_HEARTBEAT_MS'>,
  ) {}

  async create(request: MeteredRequest, body: VideoGenerationBody, reply: FastifyReply): Promise<void> {
    const plan = planVideoRequest(this.catalog, body);
    // The gateway's own request id, unique per request, so one job never takes another's place.
    const jobId = String(request.id);
    const { principal } = request;
    this.budget.claim(request); // reserved by the rate-limit guard; this relay settles or releases it now
    const follower = this.follow(jobId);
    const job: VideoJobData = { caller: callerContext(request), model: plan.model, prompt: plan.prompt, size: plan.size, traceContext: injectTraceContext() };
    try {
      await this.producer.add(job);
    } catch (error) {
      follower.cancel();
      // No job, so no usage event will ever settle the reservation.
      if (request.costEstimate) await this.budget.release(principal, jobId).catch(() => undefined);
      this.logger.error(`video job ${jobId} could not be queued: ${(error as Error).message}`);
      throw new DomainError(ErrorCode.ServiceUnavailable, 'The video queue is unavailable; retry with backoff');
    }
    return follower.start(reply, { 'x-video-job-id': jobId }, progressEvent(jobId, { status: 'queued', progress: 0 }));
  }

  async attach(request: MeteredRequest, jobId: string, reply: FastifyReply): Promise<void> {
    const follower = this.follow(jobId);
    let first: VideoStreamEvent;
    try {
      const job = isUsableJobId(jobId) ? await this.producer.get(jobId) : undefined;
      // Another account's job is reported exactly like a missing one.
      if (!job || job.data?.caller?.accountId !== request.principal.accountId) {
        throw new DomainError(ErrorCode.NotFound, `No video job ${jobId}: finished jobs are kept 24 hours (failed ones 7 days)`, 'id');
      }
      first = await this.currentEvent(jobId, job);
    } catch (error) {
      follower.cancel();
      throw error;
    }
    return follower.start(reply, { 'x-video-job-id': jobId }, first);
  }

  /**
   * A stream can last as long as its job (minutes): streams still open when the edge's shutdown grace
   * period is over end here without a final object, so the HTTP server can close, and their clients
   * re-attach through another replica.
   */
  beforeApplicationShutdown(): void {
    this.endOpenStreams();
  }

  /** Ends every open video stream cleanly (the client sees the stream end, not a reset connection). */
  endOpenStreams(): void {
    for (const end of [...this.open]) end();
  }

  private async currentEvent(jobId: string, job: Job<VideoJobData>): Promise<VideoStreamEvent> {
    const state = await job.getState();
    if (state === 'completed') return this.resultEvent(jobId, job.returnvalue as VideoJobResult);
    if (state === 'failed') return failedEvent(jobId, decodeVideoJobFailure(job.failedReason));
    const reported = job.progress as Partial<VideoJobProgress> | undefined;
    const percent = state === 'active' && typeof reported?.progress === 'number' ? reported.progress : 0;
    return progressEvent(jobId, { status: state === 'active' ? 'in_progress' : 'queued', progress: percent });
  }

  private resultEvent(jobId: string, result: VideoJobResult): VideoStreamEvent {
    return {
      id: jobId,
      object: 'video.generation',
      status: 'completed',
      model: result.model,
      size: result.size,
      resolution: result.resolution,
      duration: result.duration,
      content_type: result.contentType,
      url: this.urls.urlFor(result.objectKey, false),
    };
  }

  private toStreamEvent(jobId: string, event: VideoJobEvent): VideoStreamEvent {
    switch (event.type) {
      case 'progress':
        return progressEvent(jobId, event.progress);
      case 'completed':
        return this.resultEvent(jobId, event.result);
      case 'failed':
        return failedEvent(jobId, event.failure);
    }
  }

  private follow(jobId: string): JobFollower {
    const buffered: VideoJobEvent[] = [];
    let deliver = (event: VideoJobEvent) => void buffered.push(event);
    const unsubscribe = this.events.subscribe(jobId, (event) => deliver(event));
    return {
      cancel: unsubscribe,
      start: (reply, headers, first) =>
        new Promise<void>((resolve) => {
          const stream = new VideoEventStream(reply.raw, this.env.VIDEO_HEARTBEAT_MS);
          const end = () => {
            this.open.delete(end);
            unsubscribe();
            stream.close();
            resolve();
          };
          this.open.add(end);
          const write = (event: VideoStreamEvent) => {
            if (isFinal(event)) {
              stream.finish(event);
              end();
            } else {
              stream.send(event);
            }
          };
          reply.hijack();
          stream.open({ ...(reply.getHeaders() as OutgoingHttpHeaders), ...headers });
          reply.raw.once('close', end);
          write(first);
          deliver = (event) => {
            if (!stream.finished) write(this.toStreamEvent(jobId, event));
          };
          for (const event of buffered.splice(0)) deliver(event);
        }),
    };
  }
}
