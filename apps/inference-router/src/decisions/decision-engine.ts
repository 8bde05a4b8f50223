import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { DECISION_MODEL_ID } from '@gateway/contracts';
import type { CanonicalResponse } from '@gateway/canonical';
import { UpstreamCaller } from '../providers/upstream-caller';
import { buildDecisionPrompt, type LabelledPrompt, type Ordering } from './decision-prompt';
import type { DecisionQuestion, ValidDecision } from './decision-validation';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * The decision engine: answers every question of a validated request from the token logprobs of
 * the backing model named by the `jev` catalog entry's routes (adapter `openai` with
 * `logprobs`/`top_logprobs`, or `simulator`), through `UpstreamCaller.withFallback`, so retries
 * and route fallbacks apply as for text generation.
 *
 * Per question, two one-token completions (temperature 0, top 20 logprobs): the options in
 * request order, then reversed with the labels reassigned (see `decision-prompt.ts`). From each,
 * the first generated token's top logprobs are kept where the token (whitespace trimmed; yes/no
 * case-insensitively) is a valid label; variants of one label (`A`, ` A`) are summed; the result
 * is renormalised over the valid labels, and labels the model did not rank get 0. The two
 * distributions are averaged per option, which cancels most position and label bias.
 *
 * Answers:
 * - choice: `choice` = the option with the largest averaged probability (ties: the first in
 *   request order); `probabilities` = option id → p for every option;
 * - score: `score` = Σ level × p (0-based scale); `legend` = level index → description as sent;
 *   `probabilities` = level index → p;
 * - noul: `noul` = P(yes); no `probabilities`, no `confidence`.
 * Probabilities, score and noul are rounded to two decimals (each to its nearest; so the rounded
 * probabilities of many options need not sum to exactly 1).
 *
 * `confidence` (choice and score): the probability mass the model put on valid labels (the sum
 * of their raw, un-renormalised probabilities, averaged over the two orderings) times the
 * agreement between the orderings (1 − total variation distance between the two renormalised
 * distributions, TV = ½ Σ |p₁ − p₂|). Near 1: the model answered within the options, the same way
 * whatever the order. Low: it wanted to say something else, or the order changed its answer. It
 * is omitted when it cannot be computed: an ordering ranked no valid label (or reported no
 * logprobs). When no ordering ranked a valid label, the distribution is uniform (noul 0.5).
 */

export const DECISION_ENGINE_OPTIONS = Symbol('DECISION_ENGINE_OPTIONS');

export interface DecisionEngineOptions {
  /** Questions of one request asked at the same time (each makes 2 upstream calls at once). */
  questionConcurrency: number;
}

export const DEFAULT_DECISION_ENGINE_OPTIONS: DecisionEngineOptions = { questionConcurrency: 4 };

export interface ChoiceAnswer {
  type: 'choice';
  choice: string;
  probabilities: Record<string, number>;
  confidence?: number;
}

export interface ScoreAnswer {
  type: 'score';
  score: number;
  legend: Record<string, unknown>;
  probabilities: Record<string, number>;
  confidence?: number;
}

export interface NoulAnswer {
  type: 'noul';
  noul: number;
}

export type DecisionAnswer = ChoiceAnswer | ScoreAnswer | NoulAnswer;

export interface DecisionResult {
  /** Question id → answer, in request order. */
  answers: Record<string, DecisionAnswer>;
  /** The adapter that served the last call, for the usage event. */
  provider?: string;
  /** The catalog label of the route that answered (the last one, when the questions' calls used several). */
  upstreamRoute?: string;
}

/** What one ordering's completion says about the options (indexes in request order). */
export interface OrderingReading {
  /** Renormalised over the valid labels; absent when the model ranked no valid label. */
  probabilities?: number[];
  /** Raw probability mass on valid labels; absent when the response carried no logprobs. */
  mass?: number;
}

/** Reads the first generated token's top logprobs of `response` over the labels of `prompt`. */
export function readOrdering(response: CanonicalResponse, prompt: LabelledPrompt, optionCount: number): OrderingReading {
  const normalise = (token: string) => (prompt.caseInsensitive ? token.trim().toLowerCase() : token.trim());
  const optionFor = (token: string): number | undefined => {
    const index = prompt.labels.indexOf(normalise(token));
    return index < 0 ? undefined : prompt.optionOf[index];
  };
  const first = response.logprobs?.[0];
  if (!first) {
    // No logprobs at all: the generated text alone, when it is a label (mass unknown).
    const option = optionFor(response.text);
    return option === undefined ? {} : { probabilities: oneHot(option, optionCount) };
  }
  const ranked = [...(first.topLogprobs ?? [])];
  if (!ranked.some((entry) => entry.token === first.token)) ranked.push({ token: first.token, logprob: first.logprob });
  const raw = new Array<number>(optionCount).fill(0);
  for (const entry of ranked) {
    const option = optionFor(entry.token);
    if (option !== undefined && Number.isFinite(entry.logprob)) raw[option] += Math.exp(Math.min(0, entry.logprob));
  }
  const total = raw.reduce((sum, p) => sum + p, 0);
  if (total <= 0) return { mass: 0 };
  return { probabilities: raw.map((p) => p / total), mass: Math.min(1, total) };
}

/** The averaged distribution of the two orderings, and the confidence (see the file comment). */
export function combineOrderings(forward: OrderingReading, reversed: OrderingReading, optionCount: number): { probabilities: number[]; confidence?: number } {
  const a = forward.probabilities;
  const b = reversed.probabilities;
  if (a && b) {
    const probabilities = a.map((p, index) => (p + b[index]) / 2);
    if (forward.mass === undefined || reversed.mass === undefined) return { probabilities };
    const totalVariation = a.reduce((sum, p, index) => sum + Math.abs(p - b[index]), 0) / 2;
    const confidence = ((forward.mass + reversed.mass) / 2) * (1 - totalVariation);
    return { probabilities, confidence: Math.min(1, Math.max(0, confidence)) };
  }
  if (a || b) return { probabilities: (a ?? b)! };
  return { probabilities: new Array<number>(optionCount).fill(1 / optionCount) };
}

/** Rounds to two decimals, half up (`0.125` → `0.13`, despite binary floating point). */
export function round2(value: number): number {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

/** The answer of one question from its combined distribution (options in request order). */
export function toAnswer(question: DecisionQuestion, combined: { probabilities: number[]; confidence?: number }): DecisionAnswer {
  const { probabilities: p, confidence } = combined;
  const withConfidence = <T extends object>(answer: T): T => (confidence === undefined ? answer : { ...answer, confidence: round2(confidence) });
  switch (question.type) {
    case 'choice': {
      let best = 0;
      for (let index = 1; index < p.length; index++) if (p[index] > p[best]) best = index;
      // Object.fromEntries defines own properties: safe for any option id, `__proto__` included.
      const probabilities = Object.fromEntries(question.options.map((option, index) => [option.id, round2(p[index])]));
      return withConfidence<ChoiceAnswer>({ type: 'choice', choice: question.options[best].id, probabilities });
    }
    case 'score': {
      const expected = p.reduce((sum, probability, level) => sum + level * probability, 0);
      return withConfidence<ScoreAnswer>({
        type: 'score',
        score: round2(expected),
        legend: Object.fromEntries(question.levels.map((description, level) => [String(level), description])),
        probabilities: Object.fromEntries(p.map((probability, level) => [String(level), round2(probability)])),
      });
    }
    case 'noul':
      return { type: 'noul', noul: round2(p[0]) };
  }
}

function optionCount(question: DecisionQuestion): number {
  if (question.type === 'choice') return question.options.length;
  if (question.type === 'score') return question.levels.length;
  return 2;
}

function oneHot(option: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => (index === option ? 1 : 0));
}

@Injectable()
export class DecisionEngine {
  private readonly logger = new Logger(DecisionEngine.name);
  private readonly options: DecisionEngineOptions;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly upstream: UpstreamCaller,
    @Optional() @Inject(DECISION_ENGINE_OPTIONS) options?: Partial<DecisionEngineOptions>,
  ) {
    this.options = { ...DEFAULT_DECISION_ENGINE_OPTIONS, ...options };
  }

  /**
   * Answers every question, at most `questionConcurrency` at a time. The first failure (after
   * retries and fallbacks) aborts the calls still running and is thrown; `signal` aborts all.
   */
  async answer(decision: ValidDecision, signal: AbortSignal): Promise<DecisionResult> {
    const model = this.catalog.get(DECISION_MODEL_ID);
    if (!model || model.routes.length === 0) throw new DomainError(ErrorCode.ModelUnavailable, 'The decision model is not configured on this router');
    const local = new AbortController();
    const onAbort = () => local.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    let provider: string | undefined;
    let upstreamRoute: string | undefined;
    try {
      const answers = await mapLimited(decision.questions, this.options.questionConcurrency, local.signal, async (question) => {
        const ask = async (ordering: Ordering) => {
          const prompt = buildDecisionPrompt(decision.state, question, ordering, model.config.id);
          const { result, route } = await this.upstream.withFallback(
            model.routes,
            local.signal,
            (adapter, upstreamRoute) => adapter.complete(upstreamRoute, prompt.request, local.signal),
            model.config.id,
          );
          provider = route.adapter;
          upstreamRoute = route.label;
          return readOrdering(result, prompt, optionCount(question));
        };
        const [forward, reversed] = await Promise.all([ask('forward'), ask('reversed')]);
        if (!forward.probabilities && !reversed.probabilities) {
          this.logger.warn(`decision question ${JSON.stringify(question.id)}: the model ranked no valid label in either ordering; answering uniformly`);
        }
        return toAnswer(question, combineOrderings(forward, reversed, optionCount(question)));
      }).catch((error: unknown) => {
        // Stop the other questions' calls: their results no longer matter.
        local.abort(error);
        throw error;
      });
      return { answers: Object.fromEntries(decision.questions.map((question, index) => [question.id, answers[index]])), provider, upstreamRoute };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * `fn` over `items` with at most `limit` running at once; results in input order. On the first
 * rejection no further item starts and that rejection is returned (the caller aborts the rest).
 */
export async function mapLimited<T, R>(items: T[], limit: number, signal: AbortSignal, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && !signal.aborted && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  await Promise.all(workers);
  if (signal.aborted && !failed) throw signal.reason;
  return results;
}
