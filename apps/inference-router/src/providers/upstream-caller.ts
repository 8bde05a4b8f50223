import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ResolvedRoute } from '@gateway/catalog';
import { DomainError, GatewayMetrics, inSpan, Metrics, SpanKind } from '@gateway/platform';
import { isCredentialRefusal, ProviderAdapter, UpstreamError, UpstreamRoute } from './provider-adapter';

export const PROVIDER_ADAPTERS = Symbol('PROVIDER_ADAPTERS');
export const RETRY_POLICY = Symbol('RETRY_POLICY');

export interface RetryPolicy {
  /** Attempts per route before falling back to the next one. */
  attemptsPerRoute: number;
  baseDelayMs: number;
}

export const toUpstreamRoute = (route: ResolvedRoute): UpstreamRoute => ({
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
 * Calls a model's routes in order: connect errors, timeouts, 429 and 5xx are retried with
 * exponential backoff, then the next route is tried; a 401 or 403 (the provider refusing the
 * gateway's key) goes to the next route at once; any other 4xx is the caller's problem and is
 * returned at once. `attempt` must not have produced output when it fails (streams fall back only
 * before their first event).
 */
@Injectable()
export class UpstreamCaller {
  private readonly logger = new Logger(UpstreamCaller.name);

  constructor(
    @Inject(PROVIDER_ADAPTERS) private readonly adapters: Record<string, ProviderAdapter>,
    @Inject(RETRY_POLICY) private readonly policy: RetryPolicy,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {}

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
  ): Promise<{ result: T; route: UpstreamRoute }> {
    let lastError: unknown;
    for (const resolved of routes) {
      const route = toUpstreamRoute(resolved);
      for (let n = 0; n < this.policy.attemptsPerRoute; n++) {
        if (signal.aborted) throw lastError ?? new UpstreamError(0, 'cancelled', false);
        try {
          return { result: await this.observed(route, model, signal, () => attempt(this.adapterFor(route), route)), route };
        } catch (error) {
          lastError = error;
          if (error instanceof UpstreamError && isCredentialRefusal(error) && !signal.aborted) {
            // Retrying with the same key is pointless; another route has its own.
            this.logger.error(`${route.adapter} ${route.upstreamModel} refused the gateway's credentials (${error.status}): ${error.message}`);
            break;
          }
          if (!(error instanceof UpstreamError) || !error.retryable) throw error;
          this.logger.warn(`${route.adapter} ${route.upstreamModel} failed (${error.status || 'network'}): ${error.message}`);
          if (n + 1 < this.policy.attemptsPerRoute) await sleep(this.policy.baseDelayMs * 2 ** n, signal);
        }
      }
    }
    throw lastError;
  }

  /** A stream that failed after its first event (so after `withFallback` returned). */
  recordStreamFailure(route: UpstreamRoute, model: string): void {
    this.metrics?.counter(Metrics.upstreamErrors).inc({ provider: route.adapter, model });
  }

  /**
   * One attempt, in a client span, timed. A failure counts as an upstream error when it is the
   * provider's (see isProviderFailure), not when we cancelled it or the client's request was refused.
   */
  private observed<T>(route: UpstreamRoute, model: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    const labels = { provider: route.adapter, model };
    const started = performance.now();
    const attributes = { 'gen_ai.system': route.adapter, 'gen_ai.request.model': route.upstreamModel };
    const failed = (error: unknown) => !signal.aborted && isProviderFailure(error);
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
