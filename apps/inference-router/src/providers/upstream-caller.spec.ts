import { ResolvedRoute } from '@gateway/catalog';
import { GatewayMetrics } from '@gateway/platform';
import { upstreamDomainError, UpstreamError, type ProviderAdapter } from './provider-adapter';
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
