import type { FastifyRequest } from 'fastify';
import { mergeRouteConfig, routePolicyOf } from './route-config';

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
