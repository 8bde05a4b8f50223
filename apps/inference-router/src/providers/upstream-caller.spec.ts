import { ResolvedRoute } from '@gateway/catalog';
import { GatewayMetrics } from '@gateway/platform';
import { upstreamDomainError, UpstreamError, type ProviderAdapter } from '@gateway/providers';
import { UpstreamCaller } from './upstream-caller';

const routing = (index: number) => ({
  label: `m/${index}`,
  priority: index,
  weight: 1,
  breakerPolicy: { failures: 100, windowMs: 30_000, cooldownMs: 30_000 },
  hasQuota: false,
});
const ROUTES: ResolvedRoute[] = [
  { adapter: 'openai', base_url: 'http://upstream.invalid/v1', upstream_model: 'gpt-x', ...routing(0) },
  { adapter: 'simulator', upstream_model: 'sim', ...routing(1) },
];

const adapter = {} as ProviderAdapter;

function setup(attemptsPerRoute = 2) {
  const metrics = new GatewayMetrics();
  const caller = new UpstreamCaller({ openai: adapter, anthropic: adapter, simulator: adapter }, { attemptsPerRoute, baseDelayMs: 0 }, metrics);
  const value = async (name: string, labels: string) => {
    const line = (await metrics.render()).split('\n').find((text) => text.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { caller, value };
}

describe('UpstreamCaller metrics', () => {
  it('times every attempt and counts the provider failures, by adapter and catalog model', async () => {
    const { caller, value } = setup();
    const result = await caller.withFallback(
      ROUTES,
      new AbortController().signal,
      async (_adapter, route) => {
        if (route.adapter === 'openai') throw UpstreamError.fromStatus(500, 'boom');
        return 'answer';
      },
      'fallback-chat',
    );
    expect(result.result).toBe('answer');
    expect(await value('gateway_upstream_errors_total', 'provider="openai",model="fallback-chat"')).toBe(2);
    expect(await value('gateway_upstream_request_duration_seconds_count', 'provider="openai",model="fallback-chat"')).toBe(2);
    expect(await value('gateway_upstream_request_duration_seconds_count', 'provider="simulator",model="fallback-chat"')).toBe(1);
    expect(await value('gateway_upstream_errors_total', 'provider="simulator",model="fallback-chat"')).toBe(0);
  });

  it('does not count a refusal of the client request, nor a call the client cancelled', async () => {
    const { caller, value } = setup(1);
    await expect(
      caller.withFallback(ROUTES, new AbortController().signal, async () => Promise.reject(UpstreamError.fromStatus(400, 'max_tokens too large')), 'm'),
    ).rejects.toThrow('max_tokens too large');
    const cancelled = new AbortController();
    await expect(
      caller.withFallback(
        ROUTES,
        cancelled.signal,
        async () => {
          cancelled.abort(new Error('client went away'));
          throw new Error('client went away');
        },
        'm',
      ),
    ).rejects.toThrow('client went away');
    expect(await value('gateway_upstream_errors_total', 'provider="openai",model="m"')).toBe(0);
    expect(await value('gateway_upstream_request_duration_seconds_count', 'provider="openai",model="m"')).toBe(2);
  });

  it('counts credentials the provider refuses', async () => {
    const { caller, value } = setup(1);
    await expect(
      caller.withFallback([ROUTES[0]], new AbortController().signal, async () => Promise.reject(UpstreamError.fromStatus(401, 'bad key')), 'm'),
    ).rejects.toThrow();
    expect(await value('gateway_upstream_errors_total', 'provider="openai",model="m"')).toBe(1);
  });

  it("moves to the next route at once when a provider refuses the gateway's key, and reports a 502 to the caller", async () => {
    const { caller } = setup(3);
    const calls: string[] = [];
    const result = await caller.withFallback(
      ROUTES,
      new AbortController().signal,
      async (_adapter, route) => {
        calls.push(route.adapter);
        if (calls.length === 1) throw UpstreamError.fromStatus(403, 'key revoked');
        return 'answer';
      },
      'm',
    );
    expect(result.result).toBe('answer');
    expect(calls).toHaveLength(2); // not retried on the route that refused
    const refused = UpstreamError.fromStatus(401, 'Incorrect API key provided: sk-...abcd');
    expect(upstreamDomainError(refused).status).toBe(502);
    expect(upstreamDomainError(refused).message).not.toContain('sk-');
  });
});

describe('UpstreamCaller: upstream rate limits', () => {
  const quick = { failures: 1, windowMs: 30_000, cooldownMs: 30_000 };
  const only: ResolvedRoute[] = [{ adapter: 'simulator', upstream_model: 'sim', ...routing(0), label: 'rl/only', breakerPolicy: quick }];
  const caller = () => new UpstreamCaller({ simulator: adapter, openai: adapter }, { attemptsPerRoute: 2, baseDelayMs: 0, retryAfterMaxWaitMs: 1000 });
  const signal = () => new AbortController().signal;

  it('waits out a short Retry-After on the last route and tries it once more', async () => {
    let calls = 0;
    const served = await caller().withFallback(only, signal(), async () => {
      if (++calls === 1) throw UpstreamError.fromStatus(429, 'slow down', undefined, 0.05);
      return 'answer';
    });
    expect(served.result).toBe('answer');
    expect(calls).toBe(2);
  });

  it('falls back at once when another route is left, and does not wait past the bound', async () => {
    const routes: ResolvedRoute[] = [
      { adapter: 'openai', base_url: 'http://upstream.invalid/v1', upstream_model: 'gpt-x', ...routing(0), label: 'rl2/a' },
      { adapter: 'simulator', upstream_model: 'sim', ...routing(1), label: 'rl2/b' },
    ];
    const calls: string[] = [];
    const served = await caller().withFallback(routes, signal(), async (_adapter, route) => {
      calls.push(route.adapter);
      if (route.adapter === 'openai') throw UpstreamError.fromStatus(429, 'slow down', undefined, 0.5);
      return 'answer';
    });
    expect(served.result).toBe('answer');
    expect(calls).toEqual(['openai', 'simulator']);
    let tries = 0;
    await expect(
      caller().withFallback(
        only.map((route) => ({ ...route, label: 'rl3/only' })),
        signal(),
        async () => {
          tries++;
          throw UpstreamError.fromStatus(429, 'slow down', undefined, 30);
        },
      ),
    ).rejects.toMatchObject({ status: 429, retryAfterSeconds: 30 });
    expect(tries).toBe(1);
  });

  it('answers 429 with the remaining wait while a 429 keeps the only route open, 503 while failures do', async () => {
    const upstream = caller();
    const limited = only.map((route) => ({ ...route, label: 'rl4/only' }));
    await expect(
      upstream.withFallback(limited, signal(), async () => Promise.reject(UpstreamError.fromStatus(429, 'slow down', undefined, 30))),
    ).rejects.toThrow();
    const refused = await upstream.withFallback(limited, signal(), async () => 'never').catch((error: unknown) => error);
    expect(upstreamOrDomain(refused)).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 30 });
    const failing = only.map((route) => ({ ...route, label: 'rl5/only' }));
    await expect(upstream.withFallback(failing, signal(), async () => Promise.reject(UpstreamError.fromStatus(500, 'down')))).rejects.toThrow('down');
    const unavailable = await upstream.withFallback(failing, signal(), async () => 'never').catch((error: unknown) => error);
    expect(upstreamOrDomain(unavailable)).toMatchObject({ status: 503, code: 'service_unavailable' });
  });
});

function upstreamOrDomain(error: unknown): unknown {
  return error instanceof UpstreamError ? upstreamDomainError(error) : error;
}
