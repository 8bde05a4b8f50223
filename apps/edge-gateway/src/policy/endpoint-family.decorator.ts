import { METHOD_METADATA } from '@nestjs/common/constants';
import type { RouterFamily } from '@gateway/contracts';
import type { FastifyRequest } from 'fastify';
import { handlerRoutePolicy, mergeRouteConfig, routePolicyOf } from './route-config';

/** The `family` metric label of a route that belongs to no endpoint family (keys, accounts, models, files, videos, probes). */
export const NO_FAMILY = 'none';

/**
 * The endpoint family a route belongs to (the router family that serves it, or would if the route
 * only reads what that family wrote, as the stored Responses do): the edge's request metrics carry
 * it, so a dashboard tells the families apart, as the per-family Deployments of an edge split by
 * path do. On a controller it applies to every handler that does not declare its own. In the
 * Fastify route config, because the request observer's hooks run before Nest knows the handler.
 */
export const EndpointFamily =
  (family: RouterFamily): ClassDecorator & MethodDecorator =>
  (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) return mergeRouteConfig(descriptor.value, { family });
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value;
      if (typeof handler !== 'function' || !Reflect.hasMetadata(METHOD_METADATA, handler)) continue;
      if (handlerRoutePolicy(handler).family === undefined) mergeRouteConfig(handler, { family });
    }
  };

/** The family label of the route a request matched (`none` for a route of no family, or none matched). */
export const familyOf = (request: FastifyRequest): string => routePolicyOf(request).family ?? NO_FAMILY;
