import { METHOD_METADATA } from '@nestjs/common/constants';
import type { FastifyRequest, RouteOptions } from 'fastify';
import { handlerRoutePolicy, mergeRouteConfig, routePolicyOf } from './route-config';

/**
 * The route refuses `__proto__` keys itself, with a message naming the field (a decision's question
 * id), so the JSON body parser lets them through instead of refusing the whole body. JSON.parse
 * keeps such a key as an own property; it never reaches a prototype as long as nothing copies the
 * body with Object.assign. Read by the parser, which runs before Nest: hence the route config.
 */
export const OwnPrototypeCheck = (): MethodDecorator => (_target, _key, descriptor) => {
  mergeRouteConfig(descriptor.value as object, { ownPrototypeCheck: true });
};

export const ownsPrototypeCheck = (request: FastifyRequest): boolean => routePolicyOf(request).ownPrototypeCheck === true;

/**
 * A body limit below the server's `BODY_LIMIT_BYTES`, for routes whose largest valid body is small:
 * a larger one is a 413 before it is read, rather than megabytes parsed, transformed and validated
 * on the event loop (a 10 MB proxy-key body held every other request, probes included, for
 * seconds). On a controller it applies to every handler that does not declare its own.
 */
export const BodyLimit =
  (bytes: number): ClassDecorator & MethodDecorator =>
  (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      mergeRouteConfig(descriptor.value as object, { bodyLimit: bytes });
      return;
    }
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value;
      if (typeof handler !== 'function' || !Reflect.hasMetadata(METHOD_METADATA, handler)) continue;
      if (handlerRoutePolicy(handler).bodyLimit === undefined) mergeRouteConfig(handler, { bodyLimit: bytes });
    }
  };

/** Fastify reads a route's body limit from its options, not its config: an `onRoute` hook copies it there. */
export function applyRouteBodyLimit(route: RouteOptions): void {
  const bodyLimit = (route.config as { bodyLimit?: number } | undefined)?.bodyLimit;
  if (bodyLimit !== undefined) route.bodyLimit = Math.min(bodyLimit, route.bodyLimit ?? bodyLimit);
}
