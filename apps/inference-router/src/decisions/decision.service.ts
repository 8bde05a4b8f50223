import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { CallerContext, TextFrame, UsageStatus } from '@gateway/contracts';
import { ModelCatalog } from '@gateway/catalog';
import { randomUUID } from 'node:crypto';
import { UpstreamError } from '../providers/provider-adapter';
import { UsagePublisher } from '../usage/usage.publisher';
import { DecisionEngine, DecisionModelUnavailableError, type DecisionAnswer } from './decision-engine';
import { decisionErrorBody } from './decision-errors';
import { DECISION_MODEL_ID, DECISION_ROUTE, decisionVendor } from './decision-model';
import { DecisionInputError, validateDecisionRequest } from './decision-validation';

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

interface Outcome {
  status: UsageStatus;
  inputTokens: number;
  provider?: string;
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
    private readonly usage: UsagePublisher,
    @Optional() @Inject(DECISION_SERVICE_OPTIONS) options?: Partial<DecisionServiceOptions>,
  ) {
    this.options = { ...DEFAULT_DECISION_SERVICE_OPTIONS, ...options };
  }

  /** Requests being answered now. */
  get inFlight(): number {
    return this.active;
  }

  async decide(call: DecisionCall): Promise<TextFrame> {
    const outcome: Outcome = { status: 'error', inputTokens: 0 };
    try {
      return await this.run(call, outcome);
    } catch (error) {
      return this.fail(call, error, outcome);
    } finally {
      void this.record(call, outcome);
    }
  }

  private async run(call: DecisionCall, outcome: Outcome): Promise<TextFrame> {
    if (this.active >= this.options.maxConcurrentRequests) {
      return {
        kind: 'json',
        status: 429,
        body: decisionErrorBody(429, 'The decision model is busy; retry after a moment', 'model_busy', undefined, this.options.busyRetryAfterSeconds),
      };
    }
    // Synchronous: nothing else runs between the check above and the count below.
    const decision = validateDecisionRequest(call.body, { keyType: call.keyType, vendor: decisionVendor(this.catalog) });
    outcome.inputTokens = decision.inputTokens;
    this.active++;
    try {
      const { answers, provider } = await this.engine.answer(decision, new AbortController().signal);
      outcome.provider = provider;
      const body: DecisionResponseBody = {
        id: `dec_${randomUUID().replace(/-/g, '')}`,
        object: 'decision',
        model: DECISION_MODEL_ID,
        answers,
        usage: { input_tokens: decision.inputTokens, output_tokens: 0, total_tokens: decision.inputTokens },
      };
      outcome.status = 'success';
      return { kind: 'json', status: 200, body };
    } finally {
      this.active--;
    }
  }

  private fail(call: DecisionCall, error: unknown, outcome: Outcome): TextFrame {
    outcome.status = 'error';
    if (error instanceof DecisionInputError) {
      outcome.inputTokens = Math.max(outcome.inputTokens, error.inputTokens);
      return { kind: 'json', status: 400, body: decisionErrorBody(400, error.message, error.code, error.param) };
    }
    if (error instanceof UpstreamError && error.status === 429) {
      this.logger.warn(`decision ${call.requestId}: the backing model is rate limited: ${error.message}`);
      return {
        kind: 'json',
        status: 429,
        body: decisionErrorBody(429, 'The decision model is busy (rate limited upstream); retry after a moment', 'rate_limited', undefined, this.options.rateLimitedRetryAfterSeconds),
      };
    }
    let status = 500;
    let message = 'Internal error';
    let code = 'internal_error';
    if (error instanceof UpstreamError || error instanceof DecisionModelUnavailableError) {
      // 5xx, connect errors and timeouts after retries and fallbacks; also an upstream 4xx, which
      // is our prompt or configuration at fault, not the caller's request.
      this.logger.warn(`decision ${call.requestId} failed upstream: ${error.message}`);
      status = 503;
      message = 'The decision model is temporarily unavailable; retry with backoff';
      code = 'model_unavailable';
    } else {
      this.logger.error(`decision ${call.requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
    }
    const body = decisionErrorBody(status, message, code);
    body.request_id = call.requestId;
    return { kind: 'json', status, body };
  }

  private record(call: DecisionCall, outcome: Outcome): Promise<void> {
    // Errors are recorded too (with the tokens counted, if any), and metering charges them nothing.
    return this.usage.record(call, {
      model: DECISION_MODEL_ID,
      route: DECISION_ROUTE,
      inputTokens: outcome.inputTokens,
      outputTokens: 0,
      status: outcome.status,
      provider: outcome.provider,
    });
  }
}
