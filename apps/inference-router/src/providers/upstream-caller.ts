import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ResolvedRoute, routePlan } from '@gateway/catalog';
import { GatewayMetrics, inSpan, Metrics, SpanKind, trace } from '@gateway/platform';
import { isCredentialRefusal, ProviderAdapter, ServedRoute, toUpstreamRoute, UpstreamError, UpstreamRoute } from '@gateway/providers';
import { AttemptVerdict, callWithFallback, RetryPolicy, RouteBreakers, RouteQuotas } from '@gateway/routing';
import { DomainError, ErrorCode } from '@gateway/errors';

export const PROVIDER_ADAPTERS = Symbol('PROVIDER_ADAPTERS');
export const RETRY_POLICY = Symbol('RETRY_POLICY');

/** How one call picks among a model's routes (see `routePlan`). */
export interface RoutingOptions {
  /**
   * Stickiness key (text: `affinityKey`): the same key prefers the same route while it is usable.
   * A function is called only when a priority group has more than one route.
   */
  affinity?: string | (() => string);
  /** Estimated tokens of the request (prompt plus output cap), counted against a route's `tpm`; a function is called only for such a route (`RouteQuotas.acquire`). */
  tokens?: number | (() => number);
  /**
   * The caller gives the route's concurrency slot back itself (`release` of the result), when a
   * stream it returned has ended; otherwise it is given back as `attempt` settles.
   */
  holdSlot?: boolean;
}

/** Network failures, timeouts, 429, 5xx and refused credentials; not a 4xx about the client's request. */
export function isProviderFailure(error: unknown): boolean {
  // A request the adapter could not map for this provider is the client's (400), not the provider's.
  if (error instanceof DomainError) return false;
  if (!(error instanceof UpstreamError)) return true;
  return error.retryable || error.status === 401 || error.status === 403;
}

/**
 * Calls a model's routes by plan (`routePlan`: priority groups, lowest first; within one, weighted
 * rendezvous order, sticky with `options.affinity`) through `callWithFallback`. Connect errors,
 * timeouts, 429 and 5xx are retried, then the next route is tried; a 401 or 403 (the provider
 * refusing the gateway's key) goes to the next route at once; any other 4xx is the caller's and is
 * returned at once. When every route was skipped, a 429 (some rate-limited) or 503 (all open after
 * failures) with the shortest wait as Retry-After. `attempt` must not have produced output when it
 * fails (streams fall back only before their first event).
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
    if (!adapter) throw new Error(`no provider adapter is registered as '${route.adapter}' (libs/providers/src/registry.ts)`);
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
    const served = await callWithFallback({
      order: routePlan(routes, options.affinity).flat(),
      signal,
      policy: this.policy,
      breakers: this.breakers,
      metrics: this.metrics,
      holdSlot: options.holdSlot,
      acquire: (resolved) => this.quotas.acquire(resolved, options.tokens ?? 0),
      attempt: (resolved) => {
        this.byLabel.set(resolved.label, resolved);
        const route = toUpstreamRoute(resolved);
        return this.observed(route, model, signal, () => attempt(this.adapterFor(route), route));
      },
      judge: (error, resolved) => this.judge(error, resolved),
      cancelled: (lastError) => lastError ?? new UpstreamError(0, 'cancelled', false),
      exhausted: (skipped) => {
        const seconds = skipped.retryAfterSeconds;
        // At a provider quota, or open after the upstream's 429 with Retry-After: the provider's rate
        // limits, a 429. Every route's breaker open after failures: the upstreams are failing, a 503.
        // Either way no upstream was asked, and Retry-After says when to.
        if (skipped.rateLimited) {
          return new DomainError(
            ErrorCode.RateLimited,
            `Every upstream route of '${model}' is rate limited or at its provider quota right now; retry in ${seconds} s`,
            undefined,
            { retryAfterSeconds: seconds },
          );
        }
        return new DomainError(
          ErrorCode.ServiceUnavailable,
          `Every upstream route of '${model}' is unavailable right now (failing upstreams are out of rotation); retry in ${seconds} s`,
          undefined,
          { retryAfterSeconds: seconds },
        );
      },
    });
    return { ...served, route: toUpstreamRoute(served.route) };
  }

  /**
   * A failed attempt: a 4xx about the client's request is the client's (thrown at once); refused
   * credentials go to the next route at once (another route has its own key); connect errors,
   * timeouts, 429 and 5xx are retried; anything else is thrown.
   */
  private judge(error: unknown, resolved: ResolvedRoute): AttemptVerdict {
    if (!isProviderFailure(error)) return { kind: 'refused' };
    const upstream = error instanceof UpstreamError ? error : undefined;
    const outcome = upstream?.status === 429 ? 'rate_limited' : upstream?.status === 0 ? 'timeout' : 'error';
    const retryAfterSeconds = upstream?.status === 429 ? upstream.retryAfterSeconds : undefined;
    const where = `${resolved.label} (${resolved.adapter} ${resolved.upstream_model})`;
    if (upstream && isCredentialRefusal(upstream)) {
      // Retrying with the same key is pointless; another route has its own.
      this.logger.error(`${where} refused the gateway's credentials (${upstream.status}): ${upstream.message}`);
      return { kind: 'failed', outcome, retryAfterSeconds, then: 'next' };
    }
    if (!upstream) return { kind: 'failed', outcome, then: 'throw' };
    this.logger.warn(`${where} failed (${upstream.status || 'network'}): ${upstream.message}`);
    return { kind: 'failed', outcome, retryAfterSeconds, then: 'retry' };
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
