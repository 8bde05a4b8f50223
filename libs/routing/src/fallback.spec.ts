import type { ResolvedRoute } from '@gateway/catalog';
import { AttemptVerdict, callWithFallback, FallbackCall } from './fallback';
import { RouteBreakers } from './route-breakers';
import { RouteQuotas } from './route-quotas';

const route = (name: string, failures = 5): ResolvedRoute => ({
  adapter: 'fake',
  upstream_model: name,
  label: `m/${name}`,
  priority: 0,
  weight: 1,
  breakerPolicy: { failures, windowMs: 30_000, cooldownMs: 60_000 },
  hasQuota: false,
});

/** An error the test's `judge` reads: what it says is the verdict. */
class Failure extends Error {
  constructor(readonly verdict: AttemptVerdict) {
    super('failed');
  }
}

const retry = (retryAfterSeconds?: number) =>
  new Failure({ kind: 'failed', outcome: retryAfterSeconds === undefined ? 'error' : 'rate_limited', retryAfterSeconds, then: 'retry' });

/** Calls `order`; each route answers with the next of its scripted results (an error is thrown). */
function setup(order: ResolvedRoute[], script: Record<string, unknown[]>, overrides: Partial<FallbackCall<string>> = {}) {
  const calls: string[] = [];
  const breakers = new RouteBreakers(undefined, undefined, undefined);
  const quotas = new RouteQuotas();
  const call = (extra: Partial<FallbackCall<string>> = {}) =>
    callWithFallback<string>({
      order,
      signal: new AbortController().signal,
      policy: { attemptsPerRoute: 3, baseDelayMs: 1 },
      breakers,
      acquire: (r) => quotas.acquire(r, 0),
      attempt: async (r) => {
        calls.push(r.upstream_model);
        const next = script[r.upstream_model].shift();
        if (next instanceof Error) throw next;
        return next as string;
      },
      judge: (error) => (error instanceof Failure ? error.verdict : { kind: 'abandoned' }),
      cancelled: (last) => last ?? new Error('cancelled'),
      exhausted: (skipped) => new Error(`all skipped, retry in ${skipped.retryAfterSeconds} s${skipped.rateLimited ? ' (rate limited)' : ''}`),
      ...overrides,
      ...extra,
    });
  return { calls, breakers, call };
}

describe('callWithFallback', () => {
  it('retries a route per the policy, then serves from the next one', async () => {
    const { calls, call } = setup([route('a'), route('b')], { a: [retry(), retry(), retry()], b: ['from b'] });
    const served = await call();
    expect(served.result).toBe('from b');
    expect(served.route.label).toBe('m/b');
    expect(calls).toEqual(['a', 'a', 'a', 'b']);
  });

  it('throws a refusal at once, and `next` skips the route’s remaining attempts', async () => {
    const refused = new Failure({ kind: 'refused' });
    const first = setup([route('a'), route('b')], { a: [refused], b: ['unused'] });
    await expect(first.call()).rejects.toBe(refused);
    expect(first.calls).toEqual(['a']);

    const next = new Failure({ kind: 'failed', outcome: 'error', then: 'next' });
    const second = setup([route('a'), route('b')], { a: [next], b: ['from b'] });
    expect((await second.call()).result).toBe('from b');
    expect(second.calls).toEqual(['a', 'b']);
  });

  it('moves on once a failure opens the breaker, skips the open route later, and says when to retry when every route is skipped', async () => {
    const { calls, breakers, call } = setup([route('a', 1)], { a: [retry(30), 'unused'] });
    await expect(call()).rejects.toBeInstanceOf(Failure);
    expect(calls).toEqual(['a']);
    expect(breakers.state('m/a')).toBe('open');
    await expect(call()).rejects.toThrow('all skipped, retry in 30 s (rate limited)');
    expect(calls).toEqual(['a']);
  });

  it('waits out a short Retry-After from the last usable route and tries once more', async () => {
    const { calls, call } = setup(
      [route('a', 1)],
      { a: [retry(0.01), 'after the wait'] },
      { policy: { attemptsPerRoute: 1, baseDelayMs: 1, retryAfterMaxWaitMs: 1000 } },
    );
    expect((await call()).result).toBe('after the wait');
    expect(calls).toEqual(['a', 'a']);
  });

  it('gives the breaker admission back and rethrows what is not the route’s doing', async () => {
    const bug = new TypeError('bug');
    const { calls, breakers, call } = setup([route('a', 1), route('b')], { a: [bug], b: ['unused'] });
    await expect(call()).rejects.toBe(bug);
    expect(calls).toEqual(['a']);
    expect(breakers.state('m/a')).toBe('closed');
  });
});
