import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModelCatalog, ResolvedRoute, routePlan } from '@gateway/catalog';
import { VideoJobData, VideoJobProgress, VideoJobResult } from '@gateway/contracts';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import { Admission, enterRoute, QuotaGrant, RouteBreakers, RouteQuotas, SkippedRoutes } from '@gateway/routing';
import { OBJECT_STORE, ObjectStore } from '@gateway/storage';
import { randomUUID } from 'node:crypto';
import { GeneratedVideo, VideoJobError } from '../adapters/video-adapter';
import { VideoAdapters } from '../adapters/video-adapters';
import { VideoUsagePublisher } from '../usage/video-usage.publisher';

/** What the generation needs of its BullMQ job: its id, and a way to report progress and keep state. */
export interface RunningVideoJob {
  id: string;
  data: VideoJobData;
  updateProgress(progress: VideoJobProgress): Promise<void>;
  updateData(data: VideoJobData): Promise<void>;
}

const PASS: Admission = { kind: 'pass' };

/**
 * A `max_concurrency` slot is held while the job runs upstream; should its worker die, it expires
 * a minute after the longest the job may wait for its provider (the route's `options.timeout_ms`,
 * default 20 minutes as in the openai adapter).
 */
const slotTtlMs = (route: ResolvedRoute): number => {
  const timeout = route.options?.timeout_ms;
  return (typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 ? timeout : 1_200_000) + 60_000;
};

/**
 * Runs one video generation: the model's routes by the catalog's routing plan (priority groups,
 * weighted within one: `routePlan`), as the router does for every other endpoint: a route whose
 * circuit breaker is open, or that is at its provider quota (`rpm`: job submissions per minute;
 * `max_concurrency`: a slot held while the job runs upstream), is skipped without a request; a
 * retryable failure (timeout, unreachable, 429, 5xx) feeds the route's breaker (shared with the
 * router replicas through Redis) and moves on to the next route. A resumed job starts with the
 * route that already holds its upstream job, whatever its breaker or rpm say (nothing new is
 * submitted). When every route was skipped the attempt fails retryably (`upstream_unavailable`
 * or `rate_limited`), so BullMQ tries the job again after its backoff. Then the file goes into the
 * object store (private), then the job's one usage event — before the job completes, so a crash
 * after it cannot lose the charge, and a rerun cannot double it.
 */
@Injectable()
export class VideoGenerationService {
  private readonly logger = new Logger(VideoGenerationService.name);
  private readonly breakers: RouteBreakers;
  private readonly quotas: RouteQuotas;

  constructor(
    private readonly catalog: ModelCatalog,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    private readonly adapters: VideoAdapters,
    private readonly usage: VideoUsagePublisher,
    @Optional() breakers?: RouteBreakers,
    @Optional() quotas?: RouteQuotas,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {
    this.breakers = breakers ?? new RouteBreakers(undefined, undefined, undefined);
    this.quotas = quotas ?? new RouteQuotas();
  }

  async generate(job: RunningVideoJob, signal: AbortSignal): Promise<VideoJobResult> {
    const { data } = job;
    const model = this.catalog.get(data.model);
    if (!model) throw new VideoJobError('model_not_found', `Model '${data.model}' is no longer served`, false);
    const resume = data.upstream;
    let failure: unknown;
    const skipped = new SkippedRoutes();
    const resumed = resume ? model.routes[resume.route] : undefined;
    const plan = routePlan(model.routes).flat();
    const order = resumed ? [resumed, ...plan.filter((route) => route !== resumed)] : plan;
    for (const route of order) {
      if (signal.aborted) throw signal.reason;
      const index = model.routes.indexOf(route);
      const resuming = resume !== undefined && resume.route === index;
      const entry = await enterRoute(
        this.breakers,
        route,
        () => (resuming ? this.resumeSlot(route) : this.quotas.acquire(route, 0, undefined, slotTtlMs(route))),
        resuming ? async () => PASS : undefined,
      );
      if (!entry.entered) {
        this.count(route, entry.outcome);
        skipped.add(entry);
        continue;
      }
      const { admission, quota } = entry;
      let video: GeneratedVideo;
      try {
        video = await this.adapters.for(route).generate(
          { jobId: job.id, prompt: data.prompt, size: data.size, route },
          {
            signal,
            resumeId: resuming ? resume.id : undefined,
            progress: (percent) => job.updateProgress({ status: 'in_progress', progress: Math.round(percent) }),
            started: (upstreamId) => job.updateData({ ...job.data, upstream: { route: index, id: upstreamId } }),
          },
        );
        this.count(route, 'success');
        this.breakers.succeeded(route, admission);
      } catch (error) {
        if (signal.aborted || !(error instanceof VideoJobError)) {
          this.breakers.released(route, admission);
          throw error;
        }
        if (!error.retryable) {
          // The provider answered (it refused this prompt), or the catalog is wrong: not a sick route.
          this.count(route, 'client_error');
          this.breakers.succeeded(route, admission);
          throw error;
        }
        const status = error.upstream.status;
        this.count(route, status === 429 ? 'rate_limited' : error.code === 'upstream_timeout' ? 'timeout' : 'error');
        await this.breakers.failed(route, admission, status === 429 ? error.upstream.retryAfterSeconds : undefined);
        this.logger.warn(`video job ${job.id}: route ${route.label} (${route.adapter}) failed: ${error.message}`);
        failure = error;
        continue;
      } finally {
        quota.release();
      }
      const objectKey = `videos/${randomUUID()}.${video.extension}`;
      await this.store.put(objectKey, video.body, { contentType: video.contentType, public: false });
      await this.usage.record(data.caller, { model: data.model, status: 'success', units: 1, provider: route.adapter, upstreamRoute: route.label });
      return { objectKey, contentType: video.contentType, model: data.model, size: data.size, resolution: video.resolution, duration: video.duration };
    }
    if (failure) throw failure;
    if (order.length === 0) throw new VideoJobError('model_not_found', `Model '${data.model}' has no route left to try`, false);
    const seconds = skipped.retryAfterSeconds;
    throw skipped.rateLimited
      ? new VideoJobError('rate_limited', `Every upstream route of '${data.model}' is rate limited or at its provider quota; retry in ${seconds} s`, true)
      : new VideoJobError(
          'upstream_unavailable',
          `Every upstream route of '${data.model}' is unavailable right now (failing upstreams are out of rotation); retry in ${seconds} s`,
          true,
        );
  }

  /** The failed job's usage event (status `error`, nothing charged); settles its budget reservation. */
  async recordFailure(data: VideoJobData): Promise<void> {
    await this.usage.record(data.caller, { model: data.model, status: 'error', units: 0 }).catch(() => undefined);
  }

  /**
   * A resumed job polls the generation it already submitted: no rpm, but a concurrency slot while
   * it runs, when one is free (the upstream job exists either way, so it is polled regardless).
   */
  private async resumeSlot(route: ResolvedRoute): Promise<QuotaGrant> {
    if (!route.max_concurrency) return { granted: true, release: () => undefined };
    const slotOnly: ResolvedRoute = { ...route, rpm: undefined, tpm: undefined };
    const grant = await this.quotas.acquire(slotOnly, 0, undefined, slotTtlMs(route));
    return grant.granted ? grant : { granted: true, release: () => undefined };
  }

  private count(route: ResolvedRoute, outcome: string): void {
    this.metrics?.counter(Metrics.routeRequests).inc({ route: route.label, outcome });
  }
}
