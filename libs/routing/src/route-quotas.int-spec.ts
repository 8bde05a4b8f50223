/**
 * Provider quotas of routes on a real Redis (see tools/jest/integration-setup.ts): a route's tokens
 * per minute count what each request says it uses, and that count (a prompt's BPE count in the
 * router) is made only for a route that has a `tpm`.
 */
import type { ResolvedRoute } from '@gateway/catalog';
import { randomUUID } from 'node:crypto';
import { RouteQuotas } from './route-quotas';
import { RoutingRedis } from './routing-redis';

const redis = new RoutingRedis({ mode: 'standalone', url: `redis://127.0.0.1:6379/${process.env.TEST_REDIS_DB ?? '13'}` });
const quotas = new RouteQuotas(redis);

/** A route of its own per test: the quota keys are the route's label and the minute. */
const route = (limits: Pick<ResolvedRoute, 'rpm' | 'tpm'>): ResolvedRoute =>
  ({
    adapter: 'simulator',
    upstream_model: 'x',
    label: `quota-test-${randomUUID()}`,
    priority: 0,
    weight: 1,
    hasQuota: true,
    breakerPolicy: { failures: 1, windowMs: 10_000, cooldownMs: 60_000 },
    ...limits,
  }) as ResolvedRoute;

/** A count that says how often it was made. */
function counter(tokens: number) {
  const count = () => (count.calls++, tokens);
  count.calls = 0;
  return count;
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error('Redis never became available');
}

describe('route quotas on Redis', () => {
  // Half a minute into a calendar minute, so both requests of a test count in the same one.
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;

  beforeAll(() => until(() => redis.available));
  afterAll(() => redis.onApplicationShutdown());

  it("counts each request's tokens against a route's tokens per minute, counting them once per request", async () => {
    const limited = route({ tpm: 100 });
    const tokens = counter(60);
    expect(await quotas.acquire(limited, tokens, now)).toMatchObject({ granted: true });
    // 60 used: another 60 would pass 100 in the same minute.
    expect(await quotas.acquire(limited, tokens, now)).toMatchObject({ granted: false });
    expect(tokens.calls).toBe(2);
    // A number is taken as the count itself.
    expect(await quotas.acquire(limited, 40, now)).toMatchObject({ granted: true });
    expect(await quotas.acquire(limited, 1, now)).toMatchObject({ granted: false });
  });

  it('makes no count for a route that limits requests only, and still limits them', async () => {
    const requestsOnly = route({ rpm: 2 });
    const tokens = counter(1_000_000);
    expect(await quotas.acquire(requestsOnly, tokens, now)).toMatchObject({ granted: true });
    expect(await quotas.acquire(requestsOnly, tokens, now)).toMatchObject({ granted: true });
    expect(await quotas.acquire(requestsOnly, tokens, now)).toMatchObject({ granted: false });
    expect(tokens.calls).toBe(0);
  });
});
