import { ApiExtension } from '@nestjs/swagger';
import { METHOD_METADATA } from '@nestjs/common/constants';
import type { FastifyRequest } from 'fastify';
import type { ErrorFormat as ErrorBodyFormat } from '../errors/error-formats';
import { handlerRoutePolicy, matchedNoRoute, mergeRouteConfig, routePolicyOf } from './route-config';

/** Carries the format into the OpenAPI operation, where `finishDocument` picks the error schema and removes it. */
export const ERROR_FORMAT_EXTENSION = 'x-error-format';

const DEFAULT_ERROR_FORMAT: ErrorBodyFormat = 'openai';

/**
 * The shape of the route's error bodies, as its clients parse them: `anthropic` for the Messages
 * API, `detail` for the key routes, `openai` (the default, so most routes say nothing) elsewhere.
 * On a controller it applies to every handler that does not declare its own. It lands in the
 * Fastify route config too, because parse errors, oversized bodies and the drain's 503 are
 * answered before Nest knows the handler.
 */
export const ErrorFormat =
  (format: ErrorBodyFormat): ClassDecorator & MethodDecorator =>
  (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      mergeRouteConfig(descriptor.value, { errorFormat: format });
      ApiExtension(ERROR_FORMAT_EXTENSION, format)(target, key as string | symbol, descriptor);
      return;
    }
    // Method decorators have run by now: a handler's own declaration wins over the controller's.
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value;
      if (typeof handler !== 'function' || !Reflect.hasMetadata(METHOD_METADATA, handler)) continue;
      if (handlerRoutePolicy(handler).errorFormat === undefined) mergeRouteConfig(handler, { errorFormat: format });
    }
    ApiExtension(ERROR_FORMAT_EXTENSION, format)(target as never);
  };

/**
 * The error format of the route a request matched. A request that matched no route (a 404) keeps
 * the shape of the family its path belongs to, so a client of `/v1/messages` or `/v1/auth` still
 * parses it: the only place the edge still decides by path, and only for paths it does not serve.
 */
export function errorFormatOf(request: FastifyRequest): ErrorBodyFormat {
  if (matchedNoRoute(request)) return unmatchedRouteErrorFormat(request.url);
  return routePolicyOf(request).errorFormat ?? DEFAULT_ERROR_FORMAT;
}

export function unmatchedRouteErrorFormat(url: string): ErrorBodyFormat {
  const path = url.split('?', 1)[0];
  if (path === '/v1/auth' || path.startsWith('/v1/auth/')) return 'detail';
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return DEFAULT_ERROR_FORMAT;
}

/** The error format an OpenAPI operation declared through `@ErrorFormat` (the extension is the decorator's). */
export const documentedErrorFormat = (operation: Record<string, unknown>): ErrorBodyFormat =>
  (operation[ERROR_FORMAT_EXTENSION] as ErrorBodyFormat | undefined) ?? DEFAULT_ERROR_FORMAT;
