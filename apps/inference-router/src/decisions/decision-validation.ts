import { classifyDecisionModel } from '@gateway/catalog';
import {
  DECISION_MAX_INPUT_TOKENS,
  DECISION_MODEL_ID,
  DecisionRequestBody,
  type KeyType,
  MAX_CHOICE_OPTIONS,
  MAX_SCORE_LEVELS,
  QUESTION_TYPES,
  type QuestionType,
} from '@gateway/contracts';
import { countTokens } from '@gateway/providers';
import { compileDecisionValidator } from './decision-schema-errors';
import { DomainError, ErrorCode } from '@gateway/errors';

export { DECISION_MAX_INPUT_TOKENS, MAX_CHOICE_OPTIONS, MAX_SCORE_LEVELS, QUESTION_TYPES, type QuestionType };

/** The request schema (`@gateway/contracts`, which `/v1/openapi.json` publishes), compiled once. */
const checkBody = compileDecisionValidator(DecisionRequestBody);

/**
 * Validation of a decision request body (`POST /v1/systemone`), pure: no I/O, no catalog. The
 * model is checked first (its aliases are not a schema's business), then the body against the
 * request schema; every refusal names the offending field in `param` exactly as the client
 * spelled it (`questions.<id>.criteria.<option>`). What passes is read into the engine's shape.
 *
 * The body is read as `JSON.parse` produced it and is never copied (no spread, no
 * `Object.assign`) before validation: `JSON.parse` keeps a `__proto__` key as an own property,
 * and only `Object.keys` on the raw object sees it, so a question id `__proto__` can be refused by
 * name. Option ids are not restricted by the spec; the engine builds its answer maps with
 * `Object.fromEntries` (own properties), so an option id `__proto__` is answered safely.
 */

/** `error.code` values of decision 400s. */
export type DecisionInputErrorCode =
  | ErrorCode.InvalidBody
  | ErrorCode.MissingRequiredParameter
  | ErrorCode.InvalidType
  | ErrorCode.InvalidValue
  | ErrorCode.ModelNotSupported
  | ErrorCode.ModelVersionNotServed
  | ErrorCode.ContextLengthExceeded;

/** A 400 naming the offending field; `param` is absent only when the body itself is not an object. */
function inputError(message: string, code: DecisionInputErrorCode, param?: string): DomainError {
  return new DomainError(code, message, param);
}

/** One option of a choice question, in request order. `description` is as sent (may be null). */
export interface ChoiceOption {
  id: string;
  description: unknown;
}

interface QuestionBase {
  id: string;
  /** As sent: string, object or array. */
  instructions: unknown;
}

export interface ChoiceQuestion extends QuestionBase {
  type: 'choice';
  options: ChoiceOption[];
}

export interface ScoreQuestion extends QuestionBase {
  type: 'score';
  /** Level descriptions, lowest first, as sent (index = level). */
  levels: unknown[];
}

export interface NoulQuestion extends QuestionBase {
  type: 'noul';
  /** Meaning of yes (`true`) and no (`false`), when the request sent criteria. */
  criteria?: { yes: unknown; no: unknown };
}

export type DecisionQuestion = ChoiceQuestion | ScoreQuestion | NoulQuestion;

/** A valid decision request, ready for the engine. */
export interface ValidDecision {
  /** Always the public id: every accepted alias means the current version. */
  model: typeof DECISION_MODEL_ID;
  state: unknown;
  /** In the order of `Object.keys(questions)`. */
  questions: DecisionQuestion[];
  /** Tokens of `state` + `questions` (see `countDecisionTokens`): the billed quantity. */
  inputTokens: number;
}

export interface DecisionValidationOptions {
  keyType: KeyType;
  /** Namespace of the `<vendor>/jev` aliases (catalog `metadata.vendor`, default `systemone`). */
  vendor: string;
  /** Default `DECISION_MAX_INPUT_TOKENS`. */
  maxInputTokens?: number;
}

/**
 * The billed and limited quantity of a decision: the tokens (gpt-tokenizer, o200k_base) of
 * `JSON.stringify({state, questions})`, over the values as the client sent them.
 */
export function countDecisionTokens(state: unknown, questions: unknown): number {
  return countTokens(JSON.stringify({ state, questions }));
}

/** Validates a decision body, its length included; throws a 400 `DomainError` naming the field at fault. */
export function validateDecisionRequest(body: unknown, options: DecisionValidationOptions): ValidDecision {
  const decision = readDecisionRequest(body, options);
  checkDecisionLength(decision, options.maxInputTokens);
  return decision;
}

/** Validates everything but the length, and counts the tokens (billed even when over the limit). */
export function readDecisionRequest(body: unknown, options: DecisionValidationOptions): ValidDecision {
  if (isPlainObject(body)) validateModel(body['model'], options);
  const valid = checkBody(body);
  const questions = Object.keys(valid.questions).map((id) => readQuestion(id, ownValue(valid.questions, id) as Record<string, unknown>));
  return { model: DECISION_MODEL_ID, state: valid.state, questions, inputTokens: countDecisionTokens(valid.state, valid.questions) };
}

/** Combined `state` + `questions` limit (spec "Limits"), counted as `countDecisionTokens` does. */
export function checkDecisionLength(decision: ValidDecision, limit = DECISION_MAX_INPUT_TOKENS): void {
  if (decision.inputTokens > limit) {
    throw inputError(
      `state and questions together are ${decision.inputTokens} tokens, over the limit of ${limit} tokens`,
      ErrorCode.ContextLengthExceeded,
      'state',
    );
  }
}

function validateModel(model: unknown, options: DecisionValidationOptions): void {
  if (model === undefined) {
    if (options.keyType === 'proxy') {
      throw inputError(`Proxy keys must send model (for example "${DECISION_MODEL_ID}")`, ErrorCode.MissingRequiredParameter, 'model');
    }
    return;
  }
  // Not a string: the schema says so, in its turn.
  if (typeof model !== 'string') return;
  const kind = classifyDecisionModel(model, options.vendor);
  if (kind === 'pinned') {
    throw inputError(
      `The model '${model}' is a pinned version: only the current version is served. Use '${DECISION_MODEL_ID}' or '${DECISION_MODEL_ID}-latest'`,
      ErrorCode.ModelVersionNotServed,
      'model',
    );
  }
  if (kind === 'other') {
    throw inputError(
      `The model '${model}' is not supported by the decision endpoint. Use '${DECISION_MODEL_ID}', '${DECISION_MODEL_ID}-latest', '${options.vendor}/${DECISION_MODEL_ID}' or '${options.vendor}/${DECISION_MODEL_ID}-latest'`,
      ErrorCode.ModelNotSupported,
      'model',
    );
  }
}

/** A question the schema passed, in the engine's shape. */
function readQuestion(id: string, question: Record<string, unknown>): DecisionQuestion {
  const type = question['type'] as QuestionType;
  const instructions = question['instructions'];
  const criteria = ownValue(question, 'criteria');
  switch (type) {
    case 'choice':
      return { id, type, instructions, options: Object.keys(criteria as object).map((option) => ({ id: option, description: ownValue(criteria, option) })) };
    case 'score':
      return { id, type, instructions, levels: Array.isArray(criteria) ? criteria : Object.keys(criteria as object).map((key) => ownValue(criteria, key)) };
    case 'noul':
      return criteria === undefined
        ? { id, type, instructions }
        : { id, type, instructions, criteria: { yes: ownValue(criteria, 'true'), no: ownValue(criteria, 'false') } };
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property only: never an inherited one such as `constructor` or `toString`. */
function ownValue(object: unknown, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}
