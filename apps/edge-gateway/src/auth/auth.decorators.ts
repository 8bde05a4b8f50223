import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { KeyType, Principal } from '@gateway/contracts';
import type { FastifyRequest } from 'fastify';
import type { IpAllowlist } from './ip-allowlist';
import type { ResolvedSession } from '../console-session/console-sessions';

export const PUBLIC_ROUTE = 'auth:public';
export const ALLOWED_KEY_TYPES = 'auth:key-types';
export const SKIP_ACCESS_CHECKS = 'auth:skip-access-checks';
export const ACCEPTS_X_API_KEY = 'auth:x-api-key';
export const DECISION_MODEL_ROUTE = 'auth:decision-model';

/** Names of the security schemes in the OpenAPI document. */
export const SecuritySchemes = { bearer: 'bearer', xApiKey: 'x-api-key' } as const;

/**
 * No key needed (health, public metadata). An empty security requirement tells the API reference
 * the same thing the guard reads here.
 */
export const Public = () => applyDecorators(SetMetadata(PUBLIC_ROUTE, true), ApiSecurity({}));

/** Only these key types may call the route; others get 403. The reference lists them as `x-key-types`. */
export const KeyTypes = (...types: KeyType[]) => applyDecorators(SetMetadata(ALLOWED_KEY_TYPES, types), ApiExtension('x-key-types', types));

/** The key may also come as `x-api-key: <key>` (the Anthropic convention), besides `Authorization: Bearer`. */
export const AcceptsXApiKey = () =>
  applyDecorators(SetMetadata(ACCEPTS_X_API_KEY, true), ApiSecurity(SecuritySchemes.bearer), ApiSecurity(SecuritySchemes.xApiKey));

/** The route reports the proxy key's state itself (validate) instead of being refused by the guard. */
export const SkipAccessChecks = () => SetMetadata(SKIP_ACCESS_CHECKS, true);

/**
 * Routes served by the decision model: a body without `model` uses it, its aliases are the same
 * model to a whitelist, and ids that are not it are left for the router to refuse (400).
 */
export const DecisionModelRoute = () => SetMetadata(DECISION_MODEL_ROUTE, true);

export interface AuthenticatedRequest extends FastifyRequest {
  principal: Principal;
  ipAllowlist: IpAllowlist;
  /** The revocation epoch the principal was cached under, for the rate-limit script to compare; '' when fresh from key-service. */
  authEpoch: string;
  /** Set when a console session's cookie authenticated the request (its key, and what ends it). */
  consoleSession?: ResolvedSession;
  /** When the admission guard admitted the request against its budgets (ms, BudgetClock); metered requests only. */
  admittedAt?: number;
}

export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => context.switchToHttp().getRequest<AuthenticatedRequest>().principal,
);
