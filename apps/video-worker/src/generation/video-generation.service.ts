import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModelCatalog, ResolvedRoute, routePlan } from '@gateway/catalog';
import { VideoJobData, VideoJobProgress, VideoJobResult } from '@gateway/contracts';
import { GatewayMetrics } from '@gateway/platform';
import { generateVideo, ProviderRegistry, toUpstreamRoute, VideoJobError } from '@gateway/providers';
import { Admission, AttemptVerdict, callWithFallback, QuotaGrant, RouteBreakers, RouteQuotas } from '@gateway/routing';
import { OBJECT_STORE, ObjectStore } from '@gateway/storage';
import { randomUUID } from 'node:crypto';
import { VideoUsagePublisher } from '../usage/video-usage.publisher';

/** What the generation needs of its BullMQ job: its id, and a way to report progress and keep state. */
export interface RunningVideoJob {
  id: string;
  data: VideoJobData;
  updateProgress(progress: VideoJobProgress): Promise<void>;
  updateData(data: VideoJobData): Promise<void>;
}

const PASS: Admission = { kind: 'pass' };
/** One attempt per route: BullMQ retries the job itself, after its backoff. */
const ONE_ATTEMPT = { attemptsPerRoute: 1, baseDelayMs: 0 };

/**
 * A `max_concurrency` slot is held while the job runs upstream; should its worker die, it expires
 * a minute after the longest the job may wait for its provider (the route's `options.timeout_ms`,
 * default 20 minutes, as `generateVideo` waits).
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
    private readonly providers: ProviderRegistry,
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
    const resumed = resume ? model.routes[resume.route] : undefined;
    const plan = routePlan(model.routes).flat();
    const order = resumed ? [resumed, ...plan.filter((route) => route !== resumed)] : plan;
    const resuming = (route: ResolvedRoute) => resume !== undefined && route === resumed;
    const { result: video, route } = await callWithFallback({
      order,
      signal,
      policy: ONE_ATTEMPT,
      breakers: this.breakers,
      metrics: this.metrics,
      acquire: (route) => (resuming(route) ? this.resumeSlot(route) : this.quotas.acquire(route, 0, undefined, slotTtlMs(route))),
      admit: (route) => (resuming(route) ? Promise.resolve(PASS) : this.breakers.admit(route)),
      attempt: (route) => {
        const index = model.routes.indexOf(route);
        return generateVideo(
          this.providers.byName[route.adapter],
          toUpstreamRoute(route),
          { jobId: job.id, prompt: data.prompt, size: data.size },
          {
            signal,
            resumeId: resuming(route) ? resume?.id : undefined,
            progress: (percent) => job.updateProgress({ status: 'in_progress', progress: Math.round(percent) }),
            started: (upstreamId) => job.updateData({ ...job.data, upstream: { route: index, id: upstreamId } }),
          },
        );
      },
      judge: (error, route): AttemptVerdict => {
        if (!(error instanceof VideoJobError)) return { kind: 'abandoned' };
        // The provider answered (it refused this prompt), or the catalog is wrong: not a sick route.
        if (!error.retryable) return { kind: 'refused' };
        const status = error.upstream.status;
        this.logger.warn(`video job ${job.id}: route ${route.label} (${route.adapter}) failed: ${error.message}`);
        return {
          kind: 'failed',
          outcome: status === 429 ? 'rate_limited' : error.code === 'upstream_timeout' ? 'timeout' : 'error',
          retryAfterSeconds: status === 429 ? error.upstream.retryAfterSeconds : undefined,
          then: 'next',
        };
      },
      cancelled: () => signal.reason,
      exhausted: (skipped) => {
        if (order.length === 0) return new VideoJobError('model_not_found', `Model '${data.model}' has no route left to try`, false);
        const seconds = skipped.retryAfterSeconds;
        return skipped.rateLimited
          ? new VideoJobError('rate_limited', `Every upstream route of '${data.model}' is rate limited or at its provider quota; retry in ${seconds} s`, true)
          : new VideoJobError(
              'upstream_unavailable',
              `Every upstream route of '${data.model}' is unavailable right now (failing upstreams are out of rotation); retry in ${seconds} s`,
              true,
            );
      },
    });
    const objectKey = `videos/${randomUUID()}.${video.extension}`;
    await this.store.put(objectKey, video.body, { contentType: video.contentType, public: false });
    await this.usage.record(data.caller, { model: data.model, status: 'success', units: 1, provider: route.adapter, upstreamRoute: route.label });
    return { objectKey, contentType: video.contentType, model: data.model, size: data.size, resolution: video.resolution, duration: video.duration };
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
}
