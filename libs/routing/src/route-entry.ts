import type { ResolvedRoute } from '@gateway/catalog';
import type { Admission, RouteBreakers } from './route-breakers';
import type { QuotaGrant } from './route-quotas';

/** A route a request may use now (its breaker's admission and its quota slot), or why it was skipped. */
export type RouteEntry =
  | { entered: true; admission: Admission; quota: Extract<QuotaGrant, { granted: true }> }
  | { entered: false; outcome: 'skipped_open' | 'skipped_quota'; retryAfterMs: number; rateLimited: boolean };

/**
 * Enters one route of a request's plan: its breaker first (an open one is skipped without a
 * request), then its quota; a route at its quota gives back the breaker's admission (a half-open
 * probe stays free for another request). `admit` stands in for the breaker where the caller already
 * knows the route is in use (a video job resumed on the route that runs it).
 */
export async function enterRoute(
  breakers: RouteBreakers,
  route: ResolvedRoute,
  acquire: () => Promise<QuotaGrant>,
  admit: () => Promise<Admission> = () => breakers.admit(route),
): Promise<RouteEntry> {
  const admission = await admit();
  if (admission.kind === 'skip') return { entered: false, outcome: 'skipped_open', retryAfterMs: admission.retryAfterMs, rateLimited: admission.rateLimited };
  const quota = await acquire();
  if (!quota.granted) {
    breakers.released(route, admission);
    return { entered: false, outcome: 'skipped_quota', retryAfterMs: quota.retryAfterMs, rateLimited: true };
  }
  return { entered: true, admission, quota };
}

/**
 * The routes of one request that were skipped: when to retry, and whether any was rate-limited —
 * at its quota, or open after its upstream's 429 with Retry-After (a 429 for the client) — or all
 * were open because they failed (a 503).
 */
export class SkippedRoutes {
  private waitMs = Number.POSITIVE_INFINITY;
  rateLimited = false;

  add(entry: Extract<RouteEntry, { entered: false }>): void {
    this.waitMs = Math.min(this.waitMs, entry.retryAfterMs);
    if (entry.rateLimited) this.rateLimited = true;
  }

  /** Whole seconds until the first skipped route is usable again (at least 1). */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((Number.isFinite(this.waitMs) ? this.waitMs : 1000) / 1000));
  }
}
