import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModelCatalog, routePlan } from '@gateway/catalog';
import { VideoJobData, VideoJobProgress, VideoJobResult } from '@gateway/contracts';
import { OBJECT_STORE, ObjectStore } from '@gateway/storage';
import { randomUUID } from 'node:crypto';
import { VideoJobError } from '../adapters/video-adapter';
import { VideoAdapters } from '../adapters/video-adapters';
import { VideoUsagePublisher } from '../usage/video-usage.publisher';

/** What the generation needs of its BullMQ job: its id, and a way to report progress and keep state. */
export interface RunningVideoJob {
  id: string;
  data: VideoJobData;
  updateProgress(progress: VideoJobProgress): Promise<void>;
  updateData(data: VideoJobData): Promise<void>;
}

/**
 * Runs one video generation: the model's routes by the catalog's routing plan (priority groups,
 * weighted within one: `routePlan`; a retryable failure moves on to the next; a resumed job starts
 * with the route that already holds its upstream job), the file into the object store (private), then the job's one usage event — before the
 * job completes, so a crash after it cannot lose the charge, and a rerun cannot double it.
 */
@Injectable()
export class VideoGenerationService {
  private readonly logger = new Logger(VideoGenerationService.name);

  constructor(
    private readonly catalog: ModelCatalog,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    private readonly adapters: VideoAdapters,
    private readonly usage: VideoUsagePublisher,
  ) {}

  async generate(job: RunningVideoJob, signal: AbortSignal): Promise<VideoJobResult> {
    const { data } = job;
    const model = this.catalog.get(data.model);
    if (!model) throw new VideoJobError('model_not_found', `Model '${data.model}' is no longer served`, false);
    const resume = data.upstream;
    let failure: unknown;
    const resumed = resume ? model.routes[resume.route] : undefined;
    const plan = routePlan(model.routes).flat();
    const order = resumed ? [resumed, ...plan.filter((route) => route !== resumed)] : plan;
    for (const route of order) {
      const index = model.routes.indexOf(route);
      try {
        const video = await this.adapters.for(route).generate(
          { jobId: job.id, prompt: data.prompt, size: data.size, route },
          {
            signal,
            resumeId: resume && resume.route === index ? resume.id : undefined,
            progress: (percent) => job.updateProgress({ status: 'in_progress', progress: Math.round(percent) }),
            started: (upstreamId) => job.updateData({ ...job.data, upstream: { route: index, id: upstreamId } }),
          },
        );
        const objectKey = `videos/${randomUUID()}.${video.extension}`;
        await this.store.put(objectKey, video.body, { contentType: video.contentType, public: false });
        await this.usage.record(data.caller, { model: data.model, status: 'success', units: 1, provider: route.adapter, upstreamRoute: route.label });
        return { objectKey, contentType: video.contentType, model: data.model, size: data.size, resolution: video.resolution, duration: video.duration };
      } catch (error) {
        if (signal.aborted || !(error instanceof VideoJobError) || !error.retryable) throw error;
        this.logger.warn(`video job ${job.id}: route ${route.label} (${route.adapter}) failed: ${error.message}`);
        failure = error;
      }
    }
    throw failure ?? new VideoJobError('model_not_found', `Model '${data.model}' has no route left to try`, false);
  }

  /** The failed job's usage event (status `error`, nothing charged); settles its budget reservation. */
  async recordFailure(data: VideoJobData): Promise<void> {
    await this.usage.record(data.caller, { model: data.model, status: 'error', units: 0 }).catch(() => undefined);
  }
}
