import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { classifyDecisionModel, decisionVendor, ModelCatalog } from '@gateway/catalog';
import { DECISION_MODEL_ID, ErrorCode, KeyType } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import type { FastifyRequest } from 'fastify';
import { AccessContext, assertAccess } from './access-policy';
import { ACCEPTS_X_API_KEY, ALLOWED_KEY_TYPES, AuthenticatedRequest, DECISION_MODEL_ROUTE, PUBLIC_ROUTE, SKIP_ACCESS_CHECKS } from './auth.decorators';
import { AuthCacheService } from './auth-cache.service';
import { KeyUsageTracker } from './key-usage.tracker';

const KEY_TYPE_NAMES: Record<KeyType, string> = { master: 'master', proxy: 'proxy', dev: 'DevPass' };

/** The key from `Authorization: Bearer`, or from `x-api-key` on routes marked `@AcceptsXApiKey()`. */
export function bearerKey(request: FastifyRequest, acceptsXApiKey: boolean): string | null {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) return match[1];
  }
  const apiKey = request.headers['x-api-key'];
  if (acceptsXApiKey && typeof apiKey === 'string' && apiKey) return apiKey.trim();
  return null;
}

/** The model a request names, read from the body the way every model route sends it. */
function requestedModel(request: FastifyRequest): string | undefined {
  const body = request.body as { model?: unknown } | undefined;
  return body && typeof body === 'object' && typeof body.model === 'string' ? body.model : undefined;
}

/**
 * Authenticates every route but those marked public, from the edge's cache, and applies the key's
 * scope: proxy-key state, model whitelist, IP allowlist, and the DevPass model rule.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly cache: AuthCacheService,
    private readonly usage: KeyUsageTracker,
    private readonly catalog: ModelCatalog,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearerKey(request, this.reflector.getAllAndOverride<boolean>(ACCEPTS_X_API_KEY, targets) ?? false);
    if (!key) {
      throw new DomainError(ErrorCode.Unauthenticated, 'Missing API key: send the header Authorization: Bearer <API_KEY>');
    }
    const authenticated = await this.cache.authenticate(key);
    if (!authenticated) throw new DomainError(ErrorCode.Unauthenticated, 'Invalid API key');
    const { principal, ipAllowlist } = authenticated;
    request.principal = principal;
    request.ipAllowlist = ipAllowlist;

    const allowed = this.reflector.getAllAndOverride<KeyType[] | undefined>(ALLOWED_KEY_TYPES, targets);
    if (allowed && !allowed.includes(principal.keyType)) {
      throw new DomainError(
        ErrorCode.Forbidden,
        `This endpoint requires a ${allowed.map((type) => KEY_TYPE_NAMES[type]).join(' or ')} key; a ${KEY_TYPE_NAMES[principal.keyType]} key was sent`,
      );
    }
    if (!this.reflector.getAllAndOverride<boolean>(SKIP_ACCESS_CHECKS, targets)) {
      const model = this.reflector.getAllAndOverride<boolean>(DECISION_MODEL_ROUTE, targets)
        ? this.decisionModel(request, principal.keyType)
        : { model: requestedModel(request) };
      assertAccess(principal, ipAllowlist, { ip: request.ip, nowSeconds: Math.floor(Date.now() / 1000), ...model });
    }
    this.usage.touch(principal.keyId);
    return true;
  }

  /**
   * The decision model, named by any alias or (but by proxy keys, which must name it) by no `model`
   * at all; other ids, and a proxy key's missing one, are the router's to refuse with a 400.
   */
  private decisionModel(request: FastifyRequest, keyType: KeyType): Pick<AccessContext, 'model' | 'listedAs'> {
    const body = request.body as { model?: unknown } | undefined;
    const named = body && typeof body === 'object' ? body.model : undefined;
    const vendor = decisionVendor(this.catalog);
    if (named === undefined && keyType === 'proxy') return {};
    if (named !== undefined && (typeof named !== 'string' || classifyDecisionModel(named, vendor) !== 'current')) return {};
    return { model: named ?? DECISION_MODEL_ID, listedAs: (entry) => classifyDecisionModel(entry, vendor) === 'current' };
  }
}
