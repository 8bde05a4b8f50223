import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ResolvedRoute, routePlan } from '@gateway/catalog';
import { ErrorCode } from '@gateway/contracts';
import { DomainError, GatewayMetrics, inSpan, Metrics, SpanKind, trace } from '@gateway/platform';
import { Admission, enterRoute, RouteBreakers, RouteQuotas, SkippedRoutes } from '@gateway/routing';
import { isCredentialRefusal, ProviderAdapter, UpstreamError, UpstreamRoute } from './provider-adapter';

export const PROVIDER_ADAPTERS = Symbol('PROVIDER_ADAPTERS');
export const RETRY_POLICY = Symbol('RETRY_POLICY');

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

/** How one call picks among a model's routes (see `routePlan`). */
export interface RoutingOptions {
  /**
   * Stickiness key (text: `affinityKey`): the same key prefers the same route while it is usable.
   * A function is called only when a priority group has more than one route.
   */
  affinity?: string | (() => string);
  /** Estimated tokens of the request (prompt plus output cap), counted against a route's `tpm`. */
  tokens?: number | (() => number);
  /**
   * The caller gives the route's concurrency slot back itself (`release` of the result), when a
   * stream it returned has ended; otherwise it is given back as `attempt` settles.
   */
  holdSlot?: boolean;
}

/** The route that served a call: what the adapter used, plus its catalog label. */
export interface ServedRoute extends UpstreamRoute {
  label: string;
}

export const toUpstreamRoute = (route: ResolvedRoute): ServedRoute => ({
  label: route.label,
  adapter: route.adapter,
  baseUrl: route.base_url,
  upstreamModel: route.upstream_model,
  apiKey: route.apiKey,
  options: route.options,
  structuredOutputs: route.structured_outputs,
});

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Network failures, timeouts, 429, 5xx and refused credentials; not a 4xx about the client's request. */
export function isProviderFailure(error: unknown): boolean {
  // A request the adapter could not map for this provider is the client's (400), not the provider's.
  if (error instanceof DomainError) return false;
  if (!(error instanceof UpstreamError)) return true;
  return error.retryable || error.status === 401 || error.status === 403;
}

/**
 * Calls a model's routes by plan (`routePlan`): priority groups, lowest first; within one, weighted
 * rendezvous order (sticky with `options.affinity`). A route whose breaker is open, or that is at
 * its quota, is skipped without a request. Connect errors, timeouts, 429 and 5xx are retried with
 * exponential backoff (unless they open the route's breaker), then the next route is tried; a 401
 * or 403 (the provider refusing the gateway's key) goes to the next route at once; any other 4xx is
 * the caller's problem and is returned at once. Every skipped route and attempt feeds the route
 * metrics and breakers. A 429 with a short Retry-After from the last usable route of the plan is waited
 * out and tried once more (`RetryPolicy.retryAfterMaxWaitMs`). When every route was skipped, a
 * 429 (some rate-limited: at quota, or open after a 429 with Retry-After) or 503 (all open after
 * failures) with the shortest wait as Retry-After. `attempt` must
 * not have produced output when it fails (streams fall back only before their first event).
 */
@Injectable()
export class UpstreamCaller {
  private readonly logger = new Logger(UpstreamCaller.name);
  private readonly breakers: RouteBreakers;
  private readonly quotas: RouteQuotas;
  /** Served routes by label, for failures reported after `withFallback` returned. */
  private readonly byLabel = new Map<string, ResolvedRoute>();

  constructor(
    @Inject(PROVIDER_ADAPTERS) private readonly adapters: Record<string, ProviderAdapter>,
    @Inject(RETRY_POLICY) private readonly policy: RetryPolicy,
    @Optional() private readonly metrics?: GatewayMetrics,
    @Optional() breakers?: RouteBreakers,
    @Optional() quotas?: RouteQuotas,
  ) {
    this.breakers = breakers ?? new RouteBreakers(undefined, undefined, undefined);
    this.quotas = quotas ?? new RouteQuotas();
  }

  adapterFor(route: UpstreamRoute): ProviderAdapter {
    const adapter = this.adapters[route.adapter];
    if (!adapter) throw new Error(`no provider adapter is registered as '${route.adapter}' (providers/provider-adapters.ts)`);
    return adapter;
  }

  /** `model` (a catalog id) labels the upstream metrics. */
  async withFallback<T>(
    routes: ResolvedRoute[],
    signal: AbortSignal,
    attempt: (adapter: ProviderAdapter, route: UpstreamRoute) => Promise<T>,
    model = 'unknown',
    options: RoutingOptions = {},
  ): Promise<{ result: T; route: ServedRoute; release: () => void }> {
    let lastError: unknown;
    let attempted = false;
    const skipped = new SkippedRoutes();
    const tokens = () => (typeof options.tokens === 'function' ? options.tokens() : (options.tokens ?? 0));
    const plan = routePlan(routes, options.affinity);
    const ordered = plan.flat();
    // Checked when a route answers 429: the routes after it whose breakers are open would be skipped.
    const noneLeftAfter = (route: ResolvedRoute) => ordered.slice(ordered.indexOf(route) + 1).every((later) => this.breakers.state(later.label) === 'open');
    for (const group of plan) {
      for (const resolved of group) {
        if (signal.aborted) throw lastError ?? new UpstreamError(0, 'cancelled', false);
        const entry = await enterRoute(this.breakers, resolved, () => this.quotas.acquire(resolved, tokens()));
        if (!entry.entered) {
          this.count(resolved, entry.outcome);
          skipped.add(entry);
          continue;
        }
        const { admission, quota } = entry;
        attempted = true;
        this.byLabel.set(resolved.label, resolved);
        const route = toUpstreamRoute(resolved);
        let held = false;
        try {
          const served = await this.tryRoute(resolved, route, admission, signal, attempt, model, () => noneLeftAfter(resolved));
          if (served.ok) {
            held = options.holdSlot === true;
            return { result: served.result, route, release: held ? quota.release : () => undefined };
          }
          lastError = served.error;
        } finally {
          if (!held) quota.release();
        }
      }
    }
    if (!attempted && lastError === undefined) {
      const seconds = skipped.retryAfterSeconds;
      // At a provider quota, or open after the upstream's 429 with Retry-After: the provider's rate
      // limits, a 429. Every route's breaker open after failures: the upstreams are failing, a 503.
      // Either way no upstream was asked, and Retry-After says when to.
      if (skipped.rateLimited) {
        throw new DomainError(
          ErrorCode.RateLimited,
          `Every upstream route of '${model}' is rate limited or at its provider quota right now; retry in ${seconds} s`,
          undefined,
          { retryAfterSeconds: seconds },
        );
      }
      throw new DomainError(
        ErrorCode.ServiceUnavailable,
        `Every upstream route of '${model}' is unavailable right now (failing upstreams are out of rotation); retry in ${seconds} s`,
        undefined,
        { retryAfterSeconds: seconds },
      );
    }
    throw lastError;
  }

  /**
   * Attempts on one route. Resolves `ok: false` to fall back to the next route; throws what the
   * caller must get at once (a cancelled call, a refusal of the client's request).
   */
  private async tryRoute<T>(
    resolved: ResolvedRoute,
    route: ServedRoute,
    admission: Admission,
    signal: AbortSignal,
    attempt: (adapter: ProviderAdapter, route: UpstreamRoute) => Promise<T>,
    model: string,
    noRouteLeft: () => boolean,
  ): Promise<{ ok: true; result: T } | { ok: false; error: unknown }> {
    // A half-open route gets one request: its verdict.
    let attempts = admission.kind === 'probe' ? 1 : this.policy.attemptsPerRoute;
    let waitedOut = false;
    let lastError: unknown;
    for (let n = 0; n < attempts; n++) {
      if (signal.aborted) {
        this.breakers.released(resolved, admission);
        throw lastError ?? new UpstreamError(0, 'cancelled', false);
      }
      try {
        const result = await this.observed(route, model, signal, () => attempt(this.adapterFor(route), route));
        this.count(resolved, 'success');
        this.breakers.succeeded(resolved, admission);
        return { ok: true, result };
      } catch (error) {
        lastError = error;
        if (signal.aborted) {
          this.breakers.released(resolved, admission);
          throw error;
        }
        if (!isProviderFailure(error)) {
          // The provider answered: it is alive; the request was the problem.
          this.count(resolved, 'client_error');
          this.breakers.succeeded(resolved, admission);
          throw error;
        }
        const upstream = error instanceof UpstreamError ? error : undefined;
        this.count(resolved, upstream?.status === 429 ? 'rate_limited' : upstream?.status === 0 ? 'timeout' : 'error');
        const opened = await this.breakers.failed(resolved, admission, upstream?.status === 429 ? upstream.retryAfterSeconds : undefined);
        if (upstream && isCredentialRefusal(upstream)) {
          // Retrying with the same key is pointless; another route has its own.
          this.logger.error(
            `${route.label} (${route.adapter} ${route.upstreamModel}) refused the gateway's credentials (${upstream.status}): ${upstream.message}`,
          );
          return { ok: false, error };
        }
        if (!upstream) throw error;
        this.logger.warn(`${route.label} (${route.adapter} ${route.upstreamModel}) failed (${upstream.status || 'network'}): ${upstream.message}`);
        const waitMs = waitedOut ? undefined : this.shortRetryAfterMs(upstream);
        if (waitMs !== undefined && noRouteLeft()) {
          // No route is left to fall back to, and the upstream says when it takes requests again:
          // waiting that long serves the request, where giving up would hand the client the same wait.
          waitedOut = true;
          attempts = n + 2;
          await sleep(waitMs, signal);
          continue;
        }
        if (opened) return { ok: false, error };
        if (n + 1 < attempts) await sleep(this.policy.baseDelayMs * 2 ** n, signal);
      }
    }
    return { ok: false, error: lastError };
  }

  /** A 429's Retry-After in ms when it is within `retryAfterMaxWaitMs`, else undefined. */
  private shortRetryAfterMs(error: UpstreamError): number | undefined {
    if (error.status !== 429 || error.retryAfterSeconds === undefined) return undefined;
    const waitMs = Math.max(0, error.retryAfterSeconds * 1000);
    return waitMs <= (this.policy.retryAfterMaxWaitMs ?? 0) ? waitMs : undefined;
  }

  /** A stream that failed after its first event (so after `withFallback` returned): an upstream error and a breaker failure. */
  recordStreamFailure(route: UpstreamRoute, model: string): void {
    this.metrics?.counter(Metrics.upstreamErrors).inc({ provider: route.adapter, model });
    const resolved = (route as Partial<ServedRoute>).label ? this.byLabel.get((route as ServedRoute).label) : undefined;
    if (!resolved) return;
    this.count(resolved, 'error');
    void this.breakers.failed(resolved, { kind: 'pass' });
  }

  private count(route: ResolvedRoute, outcome: string): void {
    this.metrics?.counter(Metrics.routeRequests).inc({ route: route.label, outcome });
  }

  /**
   * One attempt, in a client span (with the route's label), timed. A failure counts as an upstream
   * error when it is the provider's (see isProviderFailure), not when we cancelled it or the
   * client's request was refused.
   */
  private observed<T>(route: ServedRoute, model: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    const labels = { provider: route.adapter, model };
    const started = performance.now();
    const attributes = { 'gen_ai.system': route.adapter, 'gen_ai.request.model': route.upstreamModel, 'gateway.route': route.label };
    const failed = (error: unknown) => !signal.aborted && isProviderFailure(error);
    // The server span of the request names the route that was tried last (the one that served it).
    trace.getActiveSpan()?.setAttribute('gateway.route', route.label);
    return inSpan(`upstream ${route.adapter}`, { kind: SpanKind.CLIENT, attributes, isFailure: failed }, async () => {
      try {
        return await call();
      } catch (error) {
        if (failed(error)) this.metrics?.counter(Metrics.upstreamErrors).inc(labels);
        throw error;
      } finally {
        this.metrics?.histogram(Metrics.upstreamRequestDuration).observe(labels, (performance.now() - started) / 1000);
      }
    });
  }
}
