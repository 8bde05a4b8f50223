import { ResolvedRoute } from '@gateway/catalog';
import { GatewayMetrics } from '@gateway/platform';
import { type ProviderAdapter, retryAfterSeconds, upstreamDomainError, UpstreamError } from '@gateway/providers';
import { UpstreamCaller } from '../providers/upstream-caller';
import { RouteBreakers, RouteQuotas } from '@gateway/routing';
import type { RoutingRedis } from '@gateway/routing';
import { affinityKey } from './affinity';
import { DomainError } from '@gateway/errors';

const route = (name: string, extra: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  adapter: 'fake',
  upstream_model: name,
  label: `m/${name}`,
  priority: 0,
  weight: 1,
  breakerPolicy: { failures: 2, windowMs: 30_000, cooldownMs: 200 },
  hasQuota: false,
  ...extra,
});

function setup() {
  const metrics = new GatewayMetrics();
  const breakers = new RouteBreakers(undefined, undefined, metrics);
  const caller = new UpstreamCaller({ fake: {} as ProviderAdapter }, { attemptsPerRoute: 1, baseDelayMs: 0 }, metrics, breakers);
  const calls: string[] = [];
  const failing = new Set<string>();
  const call = (routes: ResolvedRoute[], affinity?: string) =>
    caller.withFallback(
      routes,
      new AbortController().signal,
      async (_adapter, upstream) => {
        calls.push(upstream.upstreamModel);
        if (failing.has(upstream.upstreamModel)) throw UpstreamError.fromStatus(503, 'down');
        return upstream.upstreamModel;
      },
      'm',
      { affinity },
    );
  return { caller, breakers, calls, failing, call };
}

describe('routing in the upstream caller (per-process breakers)', () => {
  it('takes a route out after its failures, skips it without a request, and lets one probe close it after the cooldown', async () => {
    const { breakers, calls, failing, call } = setup();
    const routes = [route('a'), route('b', { priority: 1 })];
    failing.add('a');
    await call(routes);
    await call(routes);
    expect(breakers.state('m/a')).toBe('open');
    calls.length = 0;
    expect((await call(routes)).result).toBe('b');
    expect(calls).toEqual(['b']);
    failing.delete('a');
    // The cooldown (200 ms) passes: the route turns half-open on its own.
    for (const deadline = Date.now() + 5_000; breakers.state('m/a') !== 'half_open' && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(breakers.state('m/a')).toBe('half_open');
    expect((await call(routes)).result).toBe('a');
    expect(breakers.state('m/a')).toBe('closed');
  });

  it("opens a route for a 429's Retry-After, and answers 429 (a rate limit, not an outage) with what remains of it", async () => {
    const { caller, breakers } = setup();
    const routes = [route('only')];
    const limited = () =>
      caller.withFallback(routes, new AbortController().signal, async () => Promise.reject(UpstreamError.fromStatus(429, 'slow down', undefined, 7)), 'm');
    await expect(limited()).rejects.toThrow('slow down');
    expect(breakers.state('m/only')).toBe('open');
    const refused = await limited().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).status).toBe(429);
    expect((refused as DomainError).retryAfterSeconds).toBeGreaterThanOrEqual(6);
    expect((refused as DomainError).retryAfterSeconds).toBeLessThanOrEqual(7);
  });

  it('keeps a conversation on its route while it is usable, and moves it when that route opens', async () => {
    const { failing, call } = setup();
    const routes = [route('a'), route('b'), route('c')];
    const first = (await call(routes, 'conversation')).result;
    for (let i = 0; i < 5; i++) expect((await call(routes, 'conversation')).result).toBe(first);
    failing.add(first);
    const moved = (await call(routes, 'conversation')).result;
    expect(moved).not.toBe(first);
    await call(routes, 'conversation');
    for (let i = 0; i < 5; i++) expect((await call(routes, 'conversation')).result).toBe(moved);
  });
});

describe('affinityKey', () => {
  const request = { model: 'm', stream: false, system: 'be brief', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }] };
  it('prefers prompt_cache_key, then the end user, then the conversation start', () => {
    expect(affinityKey(request, { prompt_cache_key: 'p1', user: 'u' })).toBe('k:p1');
    expect(affinityKey({ ...request, user: 'alice' })).toBe('u:alice');
    expect(affinityKey(request, { metadata: { user_id: 'bob' } })).toBe('u:bob');
    const later = { ...request, messages: [...request.messages, { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'hello' }] }] };
    expect(affinityKey(later)).toBe(affinityKey(request));
    expect(affinityKey({ ...request, system: 'other' })).not.toBe(affinityKey(request));
  });
});

describe("a provider's Retry-After", () => {
  it('reads seconds or an HTTP date, and passes it on to the client of a 429', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
    expect(retryAfterSeconds('99999', now)).toBe(3600);
    expect(upstreamDomainError(UpstreamError.fromStatus(429, 'slow down', undefined, 2.5)).retryAfterSeconds).toBe(3);
  });
});

describe('the happy path', () => {
  it('makes no Redis call for a model without quotas whose routes are closed', async () => {
    const commands: string[] = [];
    const client = new Proxy({}, { get: (_target, name) => async () => (commands.push(String(name)), name === 'eval' ? [1, 0] : 'OK') });
    const redis = { available: true, client, subscriber: undefined } as unknown as RoutingRedis;
    const caller = new UpstreamCaller(
      { fake: {} as ProviderAdapter },
      { attemptsPerRoute: 1, baseDelayMs: 0 },
      undefined,
      new RouteBreakers(redis),
      new RouteQuotas(redis),
    );
    // The prompt's count for a route's tokens per minute is made only for a route that has one.
    let counted = 0;
    const tokens = () => (counted++, 42);
    const routes = [route('a', { weight: 2 }), route('b'), route('c', { priority: 1 })];
    for (let i = 0; i < 20; i++) {
      await caller.withFallback(routes, new AbortController().signal, async () => 'ok', 'm', { affinity: `k${i}`, tokens });
    }
    expect(commands).toEqual([]);
    // A route with a quota costs one script call per request.
    await caller.withFallback([route('q', { rpm: 10, hasQuota: true })], new AbortController().signal, async () => 'ok', 'm', { tokens });
    expect(commands).toEqual(['eval']);
    expect(counted).toBe(0);
    await caller.withFallback([route('t', { tpm: 1000, hasQuota: true })], new AbortController().signal, async () => 'ok', 'm', { tokens });
    expect(commands).toEqual(['eval', 'eval']);
    expect(counted).toBe(1);
  });
});
