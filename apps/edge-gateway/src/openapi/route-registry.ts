import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  method: string;
  /** As Fastify spells it: `/v1/auth/proxy/:proxy_key`. */
  path: string;
}

/**
 * Records every route as Fastify registers it (an `onRoute` hook sees Nest's controllers, plugins
 * and routes added to the instance directly), so what is served can be compared with what is documented.
 */
export function recordRoutes(fastify: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method: String(method).toUpperCase(), path: route.url ?? route.path });
  });
  return routes;
}
