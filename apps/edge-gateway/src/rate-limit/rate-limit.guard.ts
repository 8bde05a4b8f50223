import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ModelCatalog } from '@gateway/catalog';
import { ErrorCode, Plan } from '@gateway/contracts';
import { DomainError, RedisConnection } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { CostEstimate } from '../billing/request-cost';
import { CostEstimator, FREE_SUMMARY_POLL, METERED_ROUTE } from '../policy/metering.decorators';
import { RATE_LIMIT_BUCKET } from '../policy/rate-limit-bucket.decorator';
import { RateLimit } from './plan-limits';
import { RateLimitDecision, RateLimiter } from './rate-limiter';

export const PLAN_RATE_LIMITS = Symbol('PLAN_RATE_LIMITS');

type Body = Record<string, unknown>;

export interface MeteredRequest extends AuthenticatedRequest {
  /** Set on `@Metered` routes: the worst case the budget reservation uses too. */
  costEstimate?: CostEstimate | null;
}

function setHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply.headers({
    'x-ratelimit-limit-requests': String(decision.limit.requestsPerMinute),
    'x-ratelimit-remaining-requests': String(decision.remainingRequests),
    'x-ratelimit-reset-requests': `${decision.resetSeconds}s`,
    'x-ratelimit-limit-tokens': String(decision.limit.tokensPerMinute),
    'x-ratelimit-remaining-tokens': String(decision.remainingTokens),
    'x-ratelimit-reset-tokens': `${decision.resetSeconds}s`,
  });
}

/**
 * The plan's requests- and tokens-per-minute limits, after authentication, on every authenticated
 * route. Text-generation requests count their prompt tokens plus their output cap, decisions,
 * embeddings and moderations their input tokens, images none: each route's `@Metered` estimator
 * says which. `@FreeSummaryPoll()` routes are free once a minute.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limiter: RateLimiter;

  constructor(
    redis: RedisConnection,
    private readonly catalog: ModelCatalog,
    private readonly reflector: Reflector,
    @Inject(PLAN_RATE_LIMITS) private readonly limits: Record<Plan, RateLimit>,
  ) {
    this.limiter = new RateLimiter(redis.client);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<MeteredRequest>();
    if (!request.principal) return true; // a public route
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const handler = context.getHandler();
    const bucket = this.reflector.get<string | undefined>(RATE_LIMIT_BUCKET, handler);
    const accountId = bucket ? `${request.principal.accountId}:${bucket}` : request.principal.accountId;
    const limit = this.limits[request.principal.plan];
    const body = request.body && typeof request.body === 'object' ? (request.body as Body) : undefined;
    const estimate = this.reflector.get<CostEstimator | undefined>(METERED_ROUTE, handler);
    if (body && estimate) request.costEstimate = estimate(this.catalog, body);
    const tokens = request.costEstimate?.tokens ?? 0;
    if (tokens > limit.tokensPerMinute) {
      // Waiting would never help: a 429 with Retry-After would have the client retry forever.
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `This request counts ${tokens} tokens (its prompt plus its output cap), more than the ${limit.tokensPerMinute} tokens per minute ` +
          `of the ${request.principal.plan} plan: it can never fit; lower max_tokens or shorten the prompt`,
      );
    }
    if (this.reflector.get<boolean | undefined>(FREE_SUMMARY_POLL, handler) && (await this.limiter.freeSummaryPoll(accountId))) {
      setHeaders(reply, await this.limiter.peek(accountId, limit));
      return true;
    }
    const decision = await this.limiter.check(accountId, limit, tokens);
    setHeaders(reply, decision);
    if (!decision.allowed) {
      void reply.header('retry-after', String(decision.resetSeconds));
      throw new DomainError(
        ErrorCode.RateLimited,
        decision.exceeded === 'tokens'
          ? `Rate limit reached: ${limit.tokensPerMinute} tokens per minute on the ${request.principal.plan} plan; retry after ${decision.resetSeconds}s`
          : `Rate limit reached: ${limit.requestsPerMinute} requests per minute on the ${request.principal.plan} plan; retry after ${decision.resetSeconds}s`,
      );
    }
    return true;
  }
}
