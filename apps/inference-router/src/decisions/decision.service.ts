import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DECISION_MODEL_ID, Rpc, type CallerContext, type TextFrame } from '@gateway/contracts';
import { decisionVendor, ModelCatalog } from '@gateway/catalog';
import { randomUUID } from 'node:crypto';
import { CallOutcome, MeteredCalls } from '../metering/metered-calls';
import { UpstreamError } from '@gateway/providers';
import { DecisionEngine, type DecisionAnswer } from './decision-engine';
import { decisionErrorBody } from './decision-errors';
import { DECISION_ROUTE } from './decision-model';
import { checkDecisionLength, readDecisionRequest } from './decision-validation';
import { DomainError, ErrorCode } from '@gateway/errors';

export const DECISION_SERVICE_OPTIONS = Symbol('DECISION_SERVICE_OPTIONS');

export interface DecisionServiceOptions {
  /** Decision requests this router serves at once; one more is refused at once with 429 `model_busy`. */
  maxConcurrentRequests: number;
  /** `retry_after` of a 429 `model_busy` (this router saturated), in seconds. */
  busyRetryAfterSeconds: number;
  /** `retry_after` of a 429 `rate_limited` (the backing model's 429 after retries and fallbacks), in seconds. */
  rateLimitedRetryAfterSeconds: number;
}

export const DEFAULT_DECISION_SERVICE_OPTIONS: DecisionServiceOptions = {
  maxConcurrentRequests: 32,
  busyRetryAfterSeconds: 1,
  rateLimitedRetryAfterSeconds: 5,
};

/** A decision request as the router handles it: the caller (validated) and the body exactly as parsed. */
export interface DecisionCall extends CallerContext {
  body: unknown;
}

/** The spec's decision response. */
export interface DecisionResponseBody {
  id: string;
  object: 'decision';
  model: typeof DECISION_MODEL_ID;
  answers: Record<string, DecisionAnswer>;
  usage: { input_tokens: number; output_tokens: 0; total_tokens: number };
}

/**
 * One decision request: validate, answer through the engine, and reply with exactly one `json`
 * frame — 200 with the decision, or an error body (`decision-errors.ts`) with 400, 429, 503 or
 * 500. Exactly one usage event is published per request (route `decisions`, model `jev`, output
 * tokens 0), with status `error` for every failure, which metering charges nothing.
 *
 * `usage.input_tokens` (and the event's input tokens) is the billed quantity: the gpt-tokenizer
 * tokens of `JSON.stringify({state, questions})` as the client sent them — not the tokens of the
 * prompts actually sent upstream (two per question, each repeating the facts).
 */
@Injectable()
export class DecisionService {
  private readonly logger = new Logger(DecisionService.name);
  private readonly options: DecisionServiceOptions;
  private active = 0;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly engine: DecisionEngine,
    private readonly calls: MeteredCalls,
    @Optional() @Inject(DECISION_SERVICE_OPTIONS) options?: Partial<DecisionServiceOptions>,
  ) {
    this.options = { ...DEFAULT_DECISION_SERVICE_OPTIONS, ...options };
  }

  async decide(call: DecisionCall): Promise<TextFrame> {
    const reply = await this.calls.run(
      { caller: call, route: DECISION_ROUTE, family: Rpc.inferenceDecide.family, model: DECISION_MODEL_ID },
      (outcome) => this.run(call, outcome),
      (error) => this.fail(call, error),
    );
    // Only a cancelled call has no reply, and decisions cannot be cancelled.
    return reply!;
  }

  private async run(call: DecisionCall, outcome: CallOutcome): Promise<TextFrame> {
    if (this.active >= this.options.maxConcurrentRequests) {
      throw new DomainError(ErrorCode.ModelBusy, 'The decision model is busy; retry after a moment', undefined, {
        retryAfterSeconds: this.options.busyRetryAfterSeconds,
      });
    }
    // Synchronous: nothing else runs between the check above and the count below.
    const options = { keyType: call.keyType, vendor: decisionVendor(this.catalog) };
    const decision = readDecisionRequest(call.body, options);
    // Counted before the length check: a refusal over the limit is recorded with its tokens.
    outcome.inputTokens = decision.inputTokens;
    checkDecisionLength(decision);
    this.active++;
    try {
      const { answers, provider, upstreamRoute } = await this.engine.answer(decision, new AbortController().signal);
      Object.assign(outcome, { provider, upstreamRoute });
      const body: DecisionResponseBody = {
        id: `dec_${randomUUID().replace(/-/g, '')}`,
        object: 'decision',
        model: DECISION_MODEL_ID,
        answers,
        usage: { input_tokens: decision.inputTokens, output_tokens: 0, total_tokens: decision.inputTokens },
      };
      return { kind: 'json', status: 200, body };
    } finally {
      this.active--;
    }
  }

  /**
   * The decision endpoint's own terms for a backing-model failure (spec "Errors"): rate limited
   * after retries and fallbacks is a 429 `rate_limited`; anything else upstream — 5xx, connect
   * errors, timeouts, and a 4xx, which is our prompt or configuration at fault, not the caller's
   * request — is a 503 `model_unavailable`.
   */
  private fail(call: DecisionCall, error: DomainError): TextFrame {
    let answer = error;
    if (error.cause instanceof UpstreamError && error.cause.status === 429) {
      this.logger.warn(`decision ${call.requestId}: the backing model is rate limited: ${error.cause.message}`);
      answer = new DomainError(ErrorCode.ModelRateLimited, 'The decision model is busy (rate limited upstream); retry after a moment', undefined, {
        retryAfterSeconds: this.options.rateLimitedRetryAfterSeconds,
      });
    } else if (error.cause instanceof UpstreamError || error.code === ErrorCode.ModelUnavailable) {
      this.logger.warn(`decision ${call.requestId} failed upstream: ${error.message}`);
      answer = new DomainError(ErrorCode.ModelUnavailable, 'The decision model is temporarily unavailable; retry with backoff');
    }
    return { kind: 'json', status: answer.status, body: decisionErrorBody(answer, call.requestId) };
  }
}
