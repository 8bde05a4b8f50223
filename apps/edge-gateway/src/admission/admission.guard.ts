import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ModelCatalog } from '@gateway/catalog';
import { Plan } from '@gateway/contracts';
import { AdmitGate, AdmitResult, BudgetStore, ReserveResult } from '@gateway/billing';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { BudgetService, HeldReservation } from '../billing/budget.service';
import { UsageRefusals } from '../billing/usage-refusals';
import { callerContext } from '../auth/caller-context';
import { CostEstimate } from '../billing/request-cost';
import { CostEstimator, FREE_SUMMARY_POLL, METERED_ROUTE } from '../policy/metering.decorators';
import { RATE_LIMIT_BUCKET } from '../policy/rate-limit-bucket.decorator';
import { parseRateLimits, RateLimit } from './plan-limits';
import { EdgeEnv } from '../config/edge.env';
import { rateDecision, RateLimitDecision, rateWindow } from './rate-decision';
import { DomainError, ErrorCode } from '@gateway/errors';

type Body = Record<string, unknown>;

export interface MeteredRequest extends AuthenticatedRequest {
  /** Set on `@Metered` routes: the worst case the budget reservation uses too. */
  costEstimate?: CostEstimate | null;
  /** Set when the guard reserved the estimate's credits; a relay `claim`s it (`BudgetService`). */
  reservation?: HeldReservation;
}

/** What a handler declares to this guard, read once per handler. */
interface RatePolicy {
  bucket?: string;
  estimator?: CostEstimator;
  freeSummaryPoll: boolean;
}

function setHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  const reset = `${decision.resetSeconds}s`;
  void reply.headers({
    'x-ratelimit-limit-requests': String(decision.limit.requestsPerMinute),
    'x-ratelimit-remaining-requests': String(decision.remainingRequests),
    'x-ratelimit-reset-requests': reset,
    'x-ratelimit-limit-tokens': String(decision.limit.tokensPerMinute),
    'x-ratelimit-remaining-tokens': String(decision.remainingTokens),
    'x-ratelimit-reset-tokens': reset,
  });
}

/**
 * Admission, after authentication, on every authenticated route: the account's revocation epoch,
 * the plan's requests- and tokens-per-minute limits and, for a metered request, the budget
 * reservation. Text-generation requests count their prompt tokens plus their output cap, decisions,
 * embeddings and moderations their input tokens, images none: each route's `@Metered` estimator
 * says which. `@FreeSummaryPoll()` routes are free once a minute.
 *
 * One Redis script per request: a request with a cost estimate (and not a DevPass key, which never
 * uses credits) runs `BudgetService.admit` — revocation epoch, rate limit and budget reservation,
 * all or nothing, so a 402 counts nothing against the rate limit; any other request runs `BudgetStore.rateLimit`
 * (revocation epoch and rate limit). Either answers 'stale' when the account's
 * keys changed since its principal was cached: the key is authenticated again and the script rerun.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly policies = new WeakMap<object, RatePolicy>();

  private readonly limits: Record<Plan, RateLimit>;

  constructor(
    @Inject(BudgetStore) private readonly store: Pick<BudgetStore, 'rateLimit'>,
    private readonly catalog: ModelCatalog,
    private readonly reflector: Reflector,
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'PLAN_RATE_LIMITS'>,
    private readonly budget: BudgetService,
    private readonly auth: ApiKeyGuard,
    private readonly refusals: UsageRefusals,
  ) {
    this.limits = parseRateLimits(env.PLAN_RATE_LIMITS ?? '');
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<MeteredRequest>();
    if (!request.principal) return true; // a public route
    const reply = http.getResponse<FastifyReply>();
    const policy = this.policyOf(context.getHandler());
    const body = request.body && typeof request.body === 'object' ? (request.body as Body) : undefined;
    if (body && policy.estimator) request.costEstimate = policy.estimator(this.catalog, body);
    if ((await this.admit(request, reply, policy)) === 'stale') {
      // The account's keys changed since the principal was cached: ask key-service (a revoked key is
      // a 401 now), then run the script again, under the fresh principal (which has no epoch to check).
      await this.auth.reauthenticate(context);
      if ((await this.admit(request, reply, policy)) === 'stale') {
        throw new DomainError(ErrorCode.ServiceUnavailable, 'The API key could not be checked; retry with backoff');
      }
    }
    return true;
  }

  private policyOf(handler: object): RatePolicy {
    let policy = this.policies.get(handler);
    if (!policy) {
      policy = {
        bucket: this.reflector.get<string | undefined>(RATE_LIMIT_BUCKET, handler as () => void),
        estimator: this.reflector.get<CostEstimator | undefined>(METERED_ROUTE, handler as () => void),
        freeSummaryPoll: this.reflector.get<boolean | undefined>(FREE_SUMMARY_POLL, handler as () => void) ?? false,
      };
      this.policies.set(handler, policy);
    }
    return policy;
  }

  /** One script; throws the request's 400, 429 or 402; 'stale' when the principal must be authenticated again. */
  private async admit(request: MeteredRequest, reply: FastifyReply, policy: RatePolicy): Promise<'stale' | void> {
    const { principal } = request;
    const limit = this.limits[principal.plan];
    const estimate = request.costEstimate;
    const tokens = estimate?.tokens ?? 0;
    if (tokens > limit.tokensPerMinute) {
      // Waiting would never help: a 429 with Retry-After would have the client retry forever.
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `This request counts ${tokens} tokens (its prompt plus its output cap), more than the ${limit.tokensPerMinute} tokens per minute ` +
          `of the ${principal.plan} plan: it can never fit; lower max_tokens or shorten the prompt`,
      );
    }
    const { minute, resetSeconds } = rateWindow(Date.now());
    const gate: AdmitGate = {
      accountId: principal.accountId,
      expectedEpoch: request.authEpoch ?? '',
      bucket: policy.bucket,
      minute,
      requestsPerMinute: limit.requestsPerMinute,
      tokensPerMinute: limit.tokensPerMinute,
      tokens,
    };
    if (estimate && principal.keyType === 'dev' && principal.tokenBudgets?.length) {
      // A DevPass key of a plan with token windows: its worst case in tokens held against them (no credits).
      return this.admitted(request, reply, await this.budget.admitTokens(principal, String(request.id), tokens, gate), limit, resetSeconds);
    }
    if (!estimate || principal.keyType === 'dev') {
      const { state, requests, tokens: counted } = await this.store.rateLimit({ ...gate, freePoll: policy.freeSummaryPoll });
      if (state === 'stale') return 'stale';
      const exceeded = state === 'requests' || state === 'tokens' ? state : undefined;
      this.answer(reply, rateDecision(limit, requests, counted, resetSeconds, exceeded), principal.plan);
      return;
    }
    return this.admitted(request, reply, await this.budget.admit(principal, String(request.id), estimate.credits, gate), limit, resetSeconds);
  }

  /** The budget script's answer: 'stale', a 429 or 402 thrown, or the request admitted (its headers, time and reservation held). */
  private async admitted(
    request: MeteredRequest,
    reply: FastifyReply,
    result: AdmitResult & { costNano: number; at: number },
    limit: RateLimit,
    resetSeconds: number,
  ): Promise<'stale' | void> {
    const { principal } = request;
    if (!result.ok && result.reason === 'stale') return 'stale';
    const exceeded = !result.ok && (result.reason === 'requests' || result.reason === 'tokens') ? result.reason : undefined;
    this.answer(reply, rateDecision(limit, result.requests, result.tokens, resetSeconds, exceeded), principal.plan);
    if (!result.ok) {
      const window = this.budget.refusingWindow(principal, result);
      if (window && request.costEstimate) {
        const { model, route } = request.costEstimate;
        await this.refusals.record({ ...callerContext(request), admittedAt: result.at }, { model, route }, window);
      }
      throw this.budget.refusal(principal, result.costNano, result as ReserveResult, result.at);
    }
    if (result.tightest) void reply.headers(this.budget.headers(principal, result.tightest, result.at));
    request.admittedAt = result.at;
    this.budget.hold(request, reply.raw);
  }

  /** The `x-ratelimit-*` headers, and the 429 over a limit. */
  private answer(reply: FastifyReply, decision: RateLimitDecision, plan: Plan): void {
    setHeaders(reply, decision);
    if (decision.allowed) return;
    const { limit, resetSeconds } = decision;
    void reply.header('retry-after', String(resetSeconds));
    throw new DomainError(
      ErrorCode.RateLimited,
      decision.exceeded === 'tokens'
        ? `Rate limit reached: ${limit.tokensPerMinute} tokens per minute on the ${plan} plan; retry after ${resetSeconds}s`
        : `Rate limit reached: ${limit.requestsPerMinute} requests per minute on the ${plan} plan; retry after ${resetSeconds}s`,
    );
  }
}
