import type { ResolvedRoute } from '@gateway/catalog';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import type { Admission, RouteBreakers } from './route-breakers';
import type { QuotaGrant } from './route-quotas';
import { enterRoute, SkippedRoutes } from './route-entry';

/** How often, and how patiently, one route is tried before the next. */
export interface RetryPolicy {
  /** Attempts per route before falling back to the next one. */
  attemptsPerRoute: number;
  baseDelayMs: number;
  /**
   * A 429 whose Retry-After is at most this long, from the last route of a request's plan, is
   * waited out and tried once more within the request (UPSTREAM_RETRY_AFTER_MAX_WAIT_MS). 0 or
   * absent: never waited.
   */
  retryAfterMaxWaitMs?: number;
}

/** What a failed attempt means for its route, as the caller reads its own errors. */
export type AttemptVerdict =
  /** Not the route's doing (e.g. an unexpected error): its admission is given back and the error thrown. */
  | { kind: 'abandoned' }
  /** The provider answered and refused the request: the route is alive, the caller gets the error at once. */
  | { kind: 'refused' }
  /**
   * The route failed: it feeds the breaker (a 429's `retryAfterSeconds` keeps it open that long),
   * then `retry` (with backoff, unless the breaker opened), go to the `next` route, or `throw`.
   */
  | { kind: 'failed'; outcome: 'rate_limited' | 'timeout' | 'error'; retryAfterSeconds?: number; then: 'retry' | 'next' | 'throw' };

export interface FallbackCall<T> {
  /** The routes in the order to try them: `routePlan(routes).flat()`, or a resumed job's route first. */
  order: ResolvedRoute[];
  signal: AbortSignal;
  policy: RetryPolicy;
  breakers: RouteBreakers;
  /** The route's quota (rpm, tpm, a concurrency slot). */
  acquire(route: ResolvedRoute): Promise<QuotaGrant>;
  /** The route's breaker admission; default `breakers.admit` (see `enterRoute`). */
  admit?(route: ResolvedRoute): Promise<Admission>;
  /** One attempt on a route. It must not have produced output when it fails. */
  attempt(route: ResolvedRoute): Promise<T>;
  /** Reads a failed attempt's error (and may log it). Not called once `signal` aborted. */
  judge(error: unknown, route: ResolvedRoute): AttemptVerdict;
  /** What to throw when `signal` aborted before an attempt: given the last failure, if any. */
  cancelled(lastError: unknown): unknown;
  /** What to throw when every route was skipped without a request (`skipped` says when to retry). */
  exhausted(skipped: SkippedRoutes): unknown;
  /**
   * The caller gives the route's concurrency slot back itself (`release` of the result), e.g. when
   * a stream it returned has ended; otherwise it is given back as the attempt settles.
   */
  holdSlot?: boolean;
  /** Counts every skipped route and attempt by outcome (`route_requests_total`). */
  metrics?: GatewayMetrics;
}

export interface FallbackResult<T> {
  result: T;
  route: ResolvedRoute;
  /** Gives the held concurrency slot back (`holdSlot`); a no-op otherwise. */
  release: () => void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Calls routes in order until one serves: the one fallback loop of the router and the video
 * worker. A route whose breaker is open, or that is at its quota, is skipped without a request.
 * A failure the caller judges `retry` is retried with exponential backoff (a half-open route gets
 * one attempt: its verdict) unless it opened the breaker, then the next route is tried; `next`
 * goes to the next route at once. A 429 with a Retry-After within `policy.retryAfterMaxWaitMs`
 * from a route after which every route's breaker is open is waited out and tried once more. Every
 * skipped route and attempt feeds the route metrics and breakers. The last failure is thrown;
 * when every route was skipped, `exhausted`.
 */
export async function callWithFallback<T>(call: FallbackCall<T>): Promise<FallbackResult<T>> {
  const { order, signal, breakers } = call;
  let lastError: unknown;
  let attempted = false;
  const skipped = new SkippedRoutes();
  // Checked when a route answers 429: the routes after it whose breakers are open would be skipped.
  const noneLeftAfter = (route: ResolvedRoute) => order.slice(order.indexOf(route) + 1).every((later) => breakers.state(later.label) === 'open');
  for (const route of order) {
    if (signal.aborted) throw call.cancelled(lastError);
    const entry = await enterRoute(breakers, route, () => call.acquire(route), call.admit && (() => call.admit!(route)));
    if (!entry.entered) {
      count(call, route, entry.outcome);
      skipped.add(entry);
      continue;
    }
    const { admission, quota } = entry;
    attempted = true;
    let held = false;
    try {
      const served = await tryRoute(call, route, admission, () => noneLeftAfter(route));
      if (served.ok) {
        held = call.holdSlot === true;
        return { result: served.result, route, release: held ? quota.release : () => undefined };
      }
      lastError = served.error;
    } finally {
      if (!held) quota.release();
    }
  }
  if (!attempted && lastError === undefined) throw call.exhausted(skipped);
  throw lastError;
}

/**
 * Attempts on one route. Resolves `ok: false` to fall back to the next route; throws what the
 * caller must get at once (a cancelled call, a refusal of the request).
 */
async function tryRoute<T>(
  call: FallbackCall<T>,
  route: ResolvedRoute,
  admission: Admission,
  noRouteLeft: () => boolean,
): Promise<{ ok: true; result: T } | { ok: false; error: unknown }> {
  const { signal, breakers, policy } = call;
  let attempts = admission.kind === 'probe' ? 1 : policy.attemptsPerRoute;
  let waitedOut = false;
  let lastError: unknown;
  for (let n = 0; n < attempts; n++) {
    if (signal.aborted) {
      breakers.released(route, admission);
      throw call.cancelled(lastError);
    }
    try {
      const result = await call.attempt(route);
      count(call, route, 'success');
      breakers.succeeded(route, admission);
      return { ok: true, result };
    } catch (error) {
      lastError = error;
      const verdict: AttemptVerdict = signal.aborted ? { kind: 'abandoned' } : call.judge(error, route);
      if (verdict.kind === 'abandoned') {
        breakers.released(route, admission);
        throw error;
      }
      if (verdict.kind === 'refused') {
        // The provider answered: it is alive; the request was the problem.
        count(call, route, 'client_error');
        breakers.succeeded(route, admission);
        throw error;
      }
      count(call, route, verdict.outcome);
      const opened = await breakers.failed(route, admission, verdict.retryAfterSeconds);
      if (verdict.then === 'next') return { ok: false, error };
      if (verdict.then === 'throw') throw error;
      const waitMs = waitedOut ? undefined : shortRetryAfterMs(verdict.retryAfterSeconds, policy);
      if (waitMs !== undefined && noRouteLeft()) {
        // No route is left to fall back to, and the upstream says when it takes requests again:
        // waiting that long serves the request, where giving up would hand the client the same wait.
        waitedOut = true;
        attempts = n + 2;
        await sleep(waitMs, signal);
        continue;
      }
      if (opened) return { ok: false, error };
      if (n + 1 < attempts) await sleep(policy.baseDelayMs * 2 ** n, signal);
    }
  }
  return { ok: false, error: lastError };
}

/** A 429's Retry-After in ms when it is within `retryAfterMaxWaitMs`, else undefined. */
function shortRetryAfterMs(retryAfterSeconds: number | undefined, policy: RetryPolicy): number | undefined {
  if (retryAfterSeconds === undefined) return undefined;
  const waitMs = Math.max(0, retryAfterSeconds * 1000);
  return waitMs <= (policy.retryAfterMaxWaitMs ?? 0) ? waitMs : undefined;
}

function count(call: FallbackCall<unknown>, route: ResolvedRoute, outcome: string): void {
  call.metrics?.counter(Metrics.routeRequests).inc({ route: route.label, outcome });
}
