import type { IncomingMessage } from 'node:http';

/** Relative to the `auth` controller; reached only through the rewrite below. */
export const LEGACY_QUERY_LOOKUP_PATH = 'proxy-query-lookup';

const LEGACY_LIST_SLASH = '/v1/auth/proxy/';
const LEGACY_QUERY_LOOKUP_ROUTE = `/v1/auth/${LEGACY_QUERY_LOOKUP_PATH}`;

/**
 * `GET /v1/auth/proxy/` (trailing slash, key in `?proxy_key=`) is the legacy single lookup, while
 * `GET /v1/auth/proxy` lists every key. Routers treat the two paths as one, so the legacy form is
 * rewritten to a path of its own before routing.
 */
export function rewriteLegacyUrl(request: IncomingMessage): string {
  const url = request.url ?? '/';
  if (request.method === 'GET') {
    const [path, query] = url.split('?', 2) as [string, string | undefined];
    if (path === LEGACY_LIST_SLASH) return `${LEGACY_QUERY_LOOKUP_ROUTE}${query === undefined ? '' : `?${query}`}`;
  }
  return url;
}

/** The path clients call for a route: the legacy lookup is registered under a path of its own (above). */
export function publicPathOf(routePath: string): string {
  return routePath === LEGACY_QUERY_LOOKUP_ROUTE ? LEGACY_LIST_SLASH : routePath;
}
