import type { OpenAPIObject } from '@nestjs/swagger';
import { publicPathOf } from '../http/legacy-urls';
import type { RegisteredRoute } from './route-registry';

export const OPENAPI_JSON_PATH = '/v1/openapi.json';
export const DOCS_PATH = '/docs';

/** Served, but not part of the API the reference describes: the reference itself, its UI, the probes. */
const OUTSIDE_REFERENCE = [OPENAPI_JSON_PATH, '/healthz', '/readyz', '/metrics'];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function isApiPath(path: string): boolean {
  if (OUTSIDE_REFERENCE.includes(path) || path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`)) return false;
  return path === '/v1' || path.startsWith('/v1/');
}

/** `/v1/auth/proxy/:proxy_key` → `/v1/auth/proxy/{proxy_key}`, and internal paths → the ones clients call. */
export function documentedPath(routePath: string): string {
  return publicPathOf(routePath)
    .replace(/:(\w+)(\([^)]*\))?/g, '{$1}')
    .replace(/\*/g, '{wildcard}');
}

/** Two paths are the same route when they differ only in parameter names. */
const shape = (path: string): string => path.replace(/\{[^}]*\}/g, '{}');

/**
 * The API routes Fastify serves, as `METHOD /path` in the reference's spelling. HEAD routes that
 * Fastify adds beside every GET are left out.
 */
export function apiRoutes(routes: RegisteredRoute[]): string[] {
  const gets = new Set(routes.filter((route) => route.method === 'GET').map((route) => route.path));
  const listed = routes
    .filter((route) => isApiPath(route.path) && !(route.method === 'HEAD' && gets.has(route.path)))
    .map((route) => `${route.method} ${documentedPath(route.path)}`);
  return [...new Set(listed)].sort();
}

/** Every operation of the document, as `METHOD /path`. */
export function documentedOperations(document: OpenAPIObject): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => METHODS.filter((method) => item[method]).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

const byShape = (operations: string[]): Set<string> => new Set(operations.map((operation) => shape(operation)));

/** API routes that are served but missing from the document. */
export function undocumentedRoutes(routes: RegisteredRoute[], document: OpenAPIObject): string[] {
  const documented = byShape(documentedOperations(document));
  return apiRoutes(routes).filter((route) => !documented.has(shape(route)));
}

/** Operations the document describes that nothing serves. */
export function unservedOperations(routes: RegisteredRoute[], document: OpenAPIObject): string[] {
  const served = byShape(apiRoutes(routes));
  return documentedOperations(document).filter((operation) => !served.has(shape(operation)));
}
