import { ModelCatalog, ResolvedRoute } from '@gateway/catalog';
import { VideoJobData } from '@gateway/contracts';
import { GatewayMetrics } from '@gateway/platform';
import { RouteBreakers, RouteQuotas, type RoutingRedis } from '@gateway/routing';
import { ObjectStore } from '@gateway/storage';
import { GeneratedVideo, ProviderAdapter, ProviderRegistry, UpstreamRoute, VideoJobError } from '@gateway/providers';
import { VideoUsagePublisher } from '../usage/video-usage.publisher';
import { RunningVideoJob, VideoGenerationService } from './video-generation.service';

const route = (name: string, extra: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  adapter: 'fake',
  upstream_model: name,
  label: `vid/${name}`,
  priority: 0,
  weight: 1,
  breakerPolicy: { failures: 2, windowMs: 30_000, cooldownMs: 60_000 },
  hasQuota: false,
  ...extra,
});

const VIDEO: GeneratedVideo = { body: Buffer.from('x'), contentType: 'video/mp4', extension: 'mp4', duration: 1, resolution: '2x2' };

/** Upstream `name`s in `failing` answer 503; every submission is recorded in `calls`. */
function setup(routes: ResolvedRoute[], quotas?: RouteQuotas) {
  const calls: string[] = [];
  const failing = new Set<string>();
  /** Upstreams that answer 429 with this Retry-After (seconds). */
  const limited = new Map<string, number>();
  const usage: unknown[] = [];
  const adapter: ProviderAdapter = {
    complete: async () => {
      throw new Error('not a text model');
    },
    stream: () => {
      throw new Error('not a text model');
    },
    createVideo: async (upstream: UpstreamRoute) => {
      calls.push(upstream.upstreamModel);
      const retryAfterSeconds = limited.get(upstream.upstreamModel);
      if (retryAfterSeconds !== undefined)
        throw new VideoJobError('upstream_error', 'The video provider answered 429', true, { status: 429, retryAfterSeconds });
      if (failing.has(upstream.upstreamModel)) throw new VideoJobError('upstream_error', 'The video provider answered 503', true, { status: 503 });
      return `video-${calls.length}`;
    },
    pollVideo: async () => ({ status: 'completed' }),
    downloadVideo: async () => VIDEO,
  };
  const metrics = new GatewayMetrics();
  const breakers = new RouteBreakers(undefined, undefined, metrics);
  const service = new VideoGenerationService(
    { get: () => ({ routes }) } as unknown as ModelCatalog,
    { put: async () => undefined } as unknown as ObjectStore,
    { byName: { fake: adapter } } as unknown as ProviderRegistry,
    { record: async (_caller: unknown, event: unknown) => void usage.push(event) } as unknown as VideoUsagePublisher,
    breakers,
    quotas ?? new RouteQuotas(),
    metrics,
  );
  let n = 0;
  const run = () => {
    const job: RunningVideoJob = {
      id: `job-${++n}`,
      data: { model: 'vid', prompt: 'a cat', size: '16:9', caller: {} } as unknown as VideoJobData,
      updateProgress: async () => undefined,
      updateData: async (data) => void (job.data = data),
    };
    return service.generate(job, new AbortController().signal);
  };
  const outcomes = async () =>
    (await metrics.registry.getSingleMetric('gateway_route_requests_total')!.get()).values.map((v) => `${v.labels.route} ${v.labels.outcome} ${v.value}`);
  return { calls, failing, limited, usage, breakers, run, outcomes };
}

describe('video generation across routes', () => {
  it('feeds a failing route to its breaker, then skips it without a submission while it is open', async () => {
    const routes = [route('a'), route('b', { priority: 1 })];
    const { calls, failing, breakers, run, usage, outcomes } = setup(routes);
    failing.add('a');
    await run();
    await run();
    expect(calls).toEqual(['a', 'b', 'a', 'b']);
    expect(breakers.state('vid/a')).toBe('open');
    calls.length = 0;
    await run();
    expect(calls).toEqual(['b']);
    expect(usage).toHaveLength(3);
    expect(usage[2]).toMatchObject({ status: 'success', units: 1, upstreamRoute: 'vid/b' });
    expect(await outcomes()).toEqual(expect.arrayContaining(['vid/a error 2', 'vid/a skipped_open 1', 'vid/b success 3']));
  });

  it('fails the attempt retryably with a clear error when every route is open, submitting nothing', async () => {
    const { calls, failing, run } = setup([route('a')]);
    failing.add('a');
    await expect(run()).rejects.toMatchObject({ code: 'upstream_error' });
    await expect(run()).rejects.toMatchObject({ code: 'upstream_error' });
    calls.length = 0;
    const error = await run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VideoJobError);
    expect(error).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect((error as Error).message).toMatch(/Every upstream route of 'vid' is unavailable right now.*retry in \d+ s/);
    expect(calls).toEqual([]);
  });

  it("opens a route for a 429's Retry-After", async () => {
    const routes = [route('a'), route('b', { priority: 1 })];
    const { calls, limited, breakers, run, outcomes } = setup(routes);
    limited.set('a', 120);
    await run();
    expect(calls).toEqual(['a', 'b']);
    // One 429 is enough (the breaker's threshold is 2): open for the provider's 120 s.
    expect(breakers.state('vid/a')).toBe('open');
    expect(breakers.state('vid/a', Date.now() + 110_000)).toBe('open');
    expect(breakers.state('vid/a', Date.now() + 125_000)).toBe('half_open');
    calls.length = 0;
    await run();
    expect(calls).toEqual(['b']);
    expect(await outcomes()).toEqual(expect.arrayContaining(['vid/a rate_limited 1', 'vid/a skipped_open 1']));
  });
});

describe('video generation and provider quotas', () => {
  /** A Redis whose quota script refuses routes named in `full` (with 30 s to wait) and grants others; records commands. */
  function quotaRedis(full: Set<string>) {
    const commands: string[] = [];
    const client = {
      // KEYS rpm, tpm, slots; ARGV rpm, tpm, tokens, max concurrency, now, slot id, slot ttl, …
      eval: async (_script: string, _n: number, rpmKey: string, ...rest: unknown[]) => {
        commands.push(`eval ${rpmKey.split(':')[2]} ttl ${rest[8]}`);
        return [...full].some((label) => rpmKey.includes(`{${label}}`)) ? [0, 30_000] : [1, 0];
      },
      zrem: async (key: string) => void commands.push(`zrem ${key.split(':')[2]}`),
    };
    return { commands, redis: { available: true, client } as unknown as RoutingRedis };
  }

  it('skips a route at its quota, counts a submission on the next, and gives its concurrency slot back when the job ends', async () => {
    const { commands, redis } = quotaRedis(new Set(['vid/a']));
    const routes = [route('a', { rpm: 1, hasQuota: true }), route('b', { priority: 1, max_concurrency: 1, hasQuota: true })];
    const { calls, run, usage, outcomes } = setup(routes, new RouteQuotas(redis));
    await run();
    expect(calls).toEqual(['b']);
    expect(usage).toEqual([expect.objectContaining({ upstreamRoute: 'vid/b' })]);
    // The slot outlives a dead worker by the route's upstream timeout (default 20 min) plus a minute.
    expect(commands).toEqual(['eval {vid/a} ttl 1260000', 'eval {vid/b} ttl 1260000', 'zrem {vid/b}']);
    expect(await outcomes()).toEqual(expect.arrayContaining(['vid/a skipped_quota 1', 'vid/b success 1']));
  });

  it('fails the attempt retryably as rate_limited when every route is at its quota', async () => {
    const { redis } = quotaRedis(new Set(['vid/a', 'vid/b']));
    const routes = [route('a', { rpm: 1, hasQuota: true }), route('b', { max_concurrency: 2, hasQuota: true })];
    const { calls, run } = setup(routes, new RouteQuotas(redis));
    const error = await run().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate_limited', retryable: true });
    expect((error as Error).message).toMatch(/at its provider quota; retry in 30 s/);
    expect(calls).toEqual([]);
  });
});
