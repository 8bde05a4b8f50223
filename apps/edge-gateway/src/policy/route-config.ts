// Not re-exported by the package's entry; the adapter reads the handler's metadata under this key.
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import type { RouterFamily } from '@gateway/contracts';
import type { FastifyRequest } from 'fastify';
import type { ErrorFormat } from '../errors/error-formats';

/**
 * What a route declares (through the decorators in this folder) that code running before Nest's
 * handler needs: Fastify's error handler, its content-type parser and the request observer's hooks
 * see the route's Fastify config, never its Nest metadata.
 */
export interface RoutePolicy {
  errorFormat?: ErrorFormat;
  /** The route refuses `__proto__` keys itself (see `@OwnPrototypeCheck()`). */
  ownPrototypeCheck?: boolean;
  /** The endpoint family the route belongs to (see `@EndpointFamily()`). */
  family?: RouterFamily;
}

/**
 * Adds to a handler's Fastify route config rather than replacing it, so that several decorators
 * can each contribute. Nest's `@RouteConfig` replaces the whole config: written below these
 * decorators (decorators run bottom-up) it is kept. Nest's Fastify adapter reads the config from
 * the handler only, which is why class-level decorators write to every handler.
 */
export function mergeRouteConfig(handler: object, policy: RoutePolicy): void {
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...handlerRoutePolicy(handler), ...policy }, handler);
}

/** What a handler has declared so far (decorators run bottom-up, then the controller's). */
export const handlerRoutePolicy = (handler: object): RoutePolicy => Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {};

/** The route's own config; empty for a request that matched no route. */
export const routePolicyOf = (request: FastifyRequest): RoutePolicy => (request.routeOptions.config ?? {}) as RoutePolicy;

/** Fastify leaves the route pattern unset when nothing matched (its 404 handler answers). */
export const matchedNoRoute = (request: FastifyRequest): boolean => request.routeOptions.url === undefined;
