import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { classifyDecisionModel, decisionVendor, ModelCatalog } from '@gateway/catalog';
import { DECISION_MODEL_ID, INVALID_KEY_MESSAGE, KeyType, ProxyKeyMessages } from '@gateway/contracts';
import type { FastifyRequest } from 'fastify';
import { AccessContext, assertAccess } from './access-policy';
import { ACCEPTS_X_API_KEY, ALLOWED_KEY_TYPES, AuthenticatedRequest, DECISION_MODEL_ROUTE, PUBLIC_ROUTE, SKIP_ACCESS_CHECKS } from './auth.decorators';
import { Authenticated, AuthCacheService } from './auth-cache.service';
import { KeyUsageTracker } from './key-usage.tracker';
import { DomainError, ErrorCode } from '@gateway/errors';
import { ConsoleSessions } from '../console-session/console-sessions';
import { CSRF_HEADER, sessionToken } from '../console-session/session-cookie';

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

const missingKey = () => new DomainError(ErrorCode.Unauthenticated, 'Missing API key: send the header Authorization: Bearer <API_KEY>');

/** The model a request names, read from the body the way every model route sends it. */
function requestedModel(request: FastifyRequest): string | undefined {
  const body = request.body as { model?: unknown } | undefined;
  return body && typeof body === 'object' && typeof body.model === 'string' ? body.model : undefined;
}

/** What a handler declares to the guard, read once per handler. */
interface AuthPolicy {
  public: boolean;
  acceptsXApiKey: boolean;
  allowed?: KeyType[];
  skipAccessChecks: boolean;
  decisionModelRoute: boolean;
}

/**
 * Authenticates every route but those marked public, from the edge's cache, and applies the key's
 * scope: proxy-key state, model whitelist, IP allowlist, and the DevPass model rule. A cached
 * principal's revocation epoch is checked by the rate-limit guard's script, in the same round trip
 * as the rate limit; when it moved, that guard calls `reauthenticate`.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly policies = new WeakMap<object, AuthPolicy>();

  constructor(
    private readonly reflector: Reflector,
    private readonly cache: AuthCacheService,
    private readonly usage: KeyUsageTracker,
    private readonly catalog: ModelCatalog,
    private readonly sessions: ConsoleSessions,
  ) {}

  canActivate(context: ExecutionContext): Promise<boolean> | boolean {
    const policy = this.policyOf(context);
    if (policy.public) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearerKey(request, policy.acceptsXApiKey);
    if (key) return this.authorizeOrRecheck(request, policy, key);
    const token = sessionToken(request);
    if (token) return this.authorizeSession(request, policy, token);
    throw missingKey();
  }

  /**
   * A console session (its cookie, no key header): the call needs the session's CSRF token, then is
   * authenticated with the session's key like any other. A refusal of the key itself (unknown,
   * regenerated, removed, disabled, expired) ends the session: switching the key back on later does
   * not bring it back.
   */
  private async authorizeSession(request: AuthenticatedRequest, policy: AuthPolicy, token: string): Promise<boolean> {
    const csrf = request.headers[CSRF_HEADER];
    const session = await this.sessions.resolve(token, typeof csrf === 'string' ? csrf : undefined);
    if (session === null) throw new DomainError(ErrorCode.Unauthenticated, 'The console session has ended: sign in again');
    if (session === 'csrf') throw new DomainError(ErrorCode.Forbidden, `A console session's calls need its CSRF token in the ${CSRF_HEADER} header`);
    request.consoleSession = session;
    try {
      await this.authorizeOrRecheck(request, policy, session.key);
      const proxy = request.principal.proxy;
      if (proxy && (!proxy.isActive || (proxy.expiresAt !== null && Date.now() / 1000 >= proxy.expiresAt))) {
        throw new DomainError(ErrorCode.Unauthenticated, proxy.isActive ? ProxyKeyMessages.expired : ProxyKeyMessages.inactive);
      }
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.Unauthenticated) await this.sessions.endById(session.id);
      throw error;
    }
  }

  /**
   * A refusal drawn from a cached answer (a disabled, expired or narrowed key) is checked against the
   * account's epoch before it is sent: a change answered on another replica since (the key switched
   * back on, its whitelist widened) holds here at once, as a revocation does, instead of when the
   * `keys.changed` broadcast arrives.
   */
  private async authorizeOrRecheck(request: AuthenticatedRequest, policy: AuthPolicy, key: string): Promise<boolean> {
    try {
      return await this.authorize(request, policy, this.cache.authenticate(key));
    } catch (error) {
      const cachedUnder = request.authEpoch;
      if (!(error instanceof DomainError) || !cachedUnder || !request.principal) throw error;
      if (!(await this.cache.changedSince(request.principal.accountId, cachedUnder))) throw error;
      return this.authorize(request, policy, this.cache.reauthenticate(key));
    }
  }

  /**
   * The account's revocation epoch moved since the request's principal was cached: asks key-service
   * again and applies the key's scope anew (a revoked key is now a 401, a narrowed one a 403).
   */
  async reauthenticate(context: ExecutionContext): Promise<void> {
    const policy = this.policyOf(context);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    await this.authorize(request, policy, this.cache.reauthenticate(this.keyOf(request, policy)));
  }

  private policyOf(context: ExecutionContext): AuthPolicy {
    const handler = context.getHandler();
    let policy = this.policies.get(handler);
    if (!policy) {
      const targets = [handler, context.getClass()];
      policy = {
        public: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) ?? false,
        acceptsXApiKey: this.reflector.getAllAndOverride<boolean>(ACCEPTS_X_API_KEY, targets) ?? false,
        allowed: this.reflector.getAllAndOverride<KeyType[] | undefined>(ALLOWED_KEY_TYPES, targets),
        skipAccessChecks: this.reflector.getAllAndOverride<boolean>(SKIP_ACCESS_CHECKS, targets) ?? false,
        decisionModelRoute: this.reflector.getAllAndOverride<boolean>(DECISION_MODEL_ROUTE, targets) ?? false,
      };
      this.policies.set(handler, policy);
    }
    return policy;
  }

  private keyOf(request: AuthenticatedRequest, policy: AuthPolicy): string {
    const key = bearerKey(request, policy.acceptsXApiKey) ?? request.consoleSession?.key;
    if (!key) throw missingKey();
    return key;
  }

  private async authorize(request: AuthenticatedRequest, policy: AuthPolicy, lookup: Promise<Authenticated | null>): Promise<boolean> {
    const authenticated = await lookup;
    if (!authenticated) throw new DomainError(ErrorCode.Unauthenticated, INVALID_KEY_MESSAGE);
    const { principal, ipAllowlist } = authenticated;
    request.principal = principal;
    request.ipAllowlist = ipAllowlist;
    request.authEpoch = authenticated.epoch ?? '';

    const allowed = policy.allowed;
    if (allowed && !allowed.includes(principal.keyType)) {
      throw new DomainError(
        ErrorCode.Forbidden,
        `This endpoint requires a ${allowed.map((type) => KEY_TYPE_NAMES[type]).join(' or ')} key; a ${KEY_TYPE_NAMES[principal.keyType]} key was sent`,
      );
    }
    if (!policy.skipAccessChecks) {
      const model = policy.decisionModelRoute ? this.decisionModel(request, principal.keyType) : { model: requestedModel(request) };
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
