import { classifyDecisionModel } from '@gateway/catalog';
import { DECISION_MAX_INPUT_TOKENS, DECISION_MODEL_ID, ErrorCode, type KeyType } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import { countTokens } from '@gateway/providers';

export { DECISION_MAX_INPUT_TOKENS };

/**
 * Validation of a decision request body (`POST /v1/systemone`), pure: no I/O, no catalog. Every
 * refusal names the offending field in `param` exactly as the client spelled it
 * (`questions.<id>.criteria.<option>`).
 *
 * The body is read as `JSON.parse` produced it and is never copied (no spread, no
 * `Object.assign`) before validation: `JSON.parse` keeps a `__proto__` key as an own property,
 * and only `Object.keys` on the raw object sees it, so a question id `__proto__` can be refused by
 * name. Option ids are not restricted by the spec; the engine builds its answer maps with
 * `Object.fromEntries` (own properties), so an option id `__proto__` is answered safely.
 */

export const MAX_CHOICE_OPTIONS = 255;
export const MAX_SCORE_LEVELS = 10;
export const QUESTION_TYPES = ['choice', 'score', 'noul'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

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
  if (!isPlainObject(body)) throw inputError('Request body must be a JSON object', ErrorCode.InvalidBody);
  validateModel(body['model'], options);
  const state = body['state'];
  validateState(state);
  const rawQuestions = body['questions'];
  const questions = validateQuestions(rawQuestions);
  return { model: DECISION_MODEL_ID, state, questions, inputTokens: countDecisionTokens(state, rawQuestions) };
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
  if (typeof model !== 'string') throw inputError('model must be a string', ErrorCode.InvalidType, 'model');
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

function validateState(state: unknown): void {
  if (state === undefined) throw inputError('state is required', ErrorCode.MissingRequiredParameter, 'state');
  if (!isStructured(state)) throw inputError('state must be a string, an object or an array', ErrorCode.InvalidType, 'state');
}

function validateQuestions(questions: unknown): DecisionQuestion[] {
  if (questions === undefined) throw inputError('questions is required', ErrorCode.MissingRequiredParameter, 'questions');
  if (!isPlainObject(questions)) throw inputError('questions must be an object mapping question ids to questions', ErrorCode.InvalidType, 'questions');
  // Object.keys on the raw parsed object: sees an own `__proto__` key, which JSON.parse keeps.
  const ids = Object.keys(questions);
  if (ids.length === 0) throw inputError('questions must contain at least one question', ErrorCode.InvalidValue, 'questions');
  return ids.map((id) => validateQuestion(id, questions));
}

function validateQuestion(id: string, questions: Record<string, unknown>): DecisionQuestion {
  const at = `questions.${id}`;
  if (id.length === 0) throw inputError('A question id must not be empty', ErrorCode.InvalidValue, at);
  if (id === '__proto__') throw inputError('A question id must not be __proto__', ErrorCode.InvalidValue, at);
  const question = ownValue(questions, id);
  if (!isPlainObject(question)) throw inputError(`${at} must be an object with type, instructions and criteria`, ErrorCode.InvalidType, at);

  const type = ownValue(question, 'type');
  if (type === undefined) throw inputError(`${at}.type is required`, ErrorCode.MissingRequiredParameter, `${at}.type`);
  if (!(QUESTION_TYPES as readonly unknown[]).includes(type)) {
    throw inputError(`${at}.type must be one of ${QUESTION_TYPES.join(', ')}`, ErrorCode.InvalidValue, `${at}.type`);
  }
  const instructions = ownValue(question, 'instructions');
  if (instructions === undefined) throw inputError(`${at}.instructions is required`, ErrorCode.MissingRequiredParameter, `${at}.instructions`);
  if (!isStructured(instructions)) {
    throw inputError(`${at}.instructions must be a string, an object or an array`, ErrorCode.InvalidType, `${at}.instructions`);
  }

  const criteria = ownValue(question, 'criteria');
  switch (type as QuestionType) {
    case 'choice':
      return { id, type: 'choice', instructions, options: choiceOptions(criteria, at) };
    case 'score':
      return { id, type: 'score', instructions, levels: scoreLevels(criteria, at) };
    case 'noul': {
      const noul = noulCriteria(criteria, at);
      return noul ? { id, type: 'noul', instructions, criteria: noul } : { id, type: 'noul', instructions };
    }
  }
}

/** Choice: an object of 1..255 option id → description (string, object, array or null). */
function choiceOptions(criteria: unknown, at: string): ChoiceOption[] {
  const param = `${at}.criteria`;
  if (criteria === undefined) throw inputError(`${param} is required for a choice question`, ErrorCode.MissingRequiredParameter, param);
  if (!isPlainObject(criteria)) throw inputError(`${param} must be an object mapping option ids to descriptions`, ErrorCode.InvalidType, param);
  const ids = Object.keys(criteria);
  if (ids.length < 1 || ids.length > MAX_CHOICE_OPTIONS) {
    throw inputError(`${param} must have 1 to ${MAX_CHOICE_OPTIONS} options (got ${ids.length})`, ErrorCode.InvalidValue, param);
  }
  return ids.map((option) => {
    const description = ownValue(criteria, option);
    if (description !== null && !isStructured(description)) {
      throw inputError(`${param}.${option} must be a string, an object, an array or null`, ErrorCode.InvalidType, `${param}.${option}`);
    }
    return { id: option, description };
  });
}

/** Score: an array of 1..10 level descriptions, or an object keyed exactly "0".."n-1". */
function scoreLevels(criteria: unknown, at: string): unknown[] {
  const param = `${at}.criteria`;
  if (criteria === undefined) throw inputError(`${param} is required for a score question`, ErrorCode.MissingRequiredParameter, param);
  let levels: unknown[];
  if (Array.isArray(criteria)) {
    levels = criteria;
  } else if (isPlainObject(criteria)) {
    const keys = Object.keys(criteria);
    const expected = keys.map((_, index) => String(index));
    // Integer-like keys come first, ascending, from Object.keys; anything else sorts after them.
    if (keys.some((key, index) => key !== expected[index])) {
      throw inputError(`${param} as an object must have exactly the keys "0", "1", ... with no gaps`, ErrorCode.InvalidValue, param);
    }
    levels = keys.map((key) => ownValue(criteria, key));
  } else {
    throw inputError(`${param} must be an array of level descriptions (lowest first)`, ErrorCode.InvalidType, param);
  }
  if (levels.length < 1 || levels.length > MAX_SCORE_LEVELS) {
    throw inputError(`${param} must have 1 to ${MAX_SCORE_LEVELS} levels (got ${levels.length})`, ErrorCode.InvalidValue, param);
  }
  levels.forEach((description, index) => {
    if (!isStructured(description)) {
      throw inputError(`${param}.${index} must be a string, an object or an array`, ErrorCode.InvalidType, `${param}.${index}`);
    }
  });
  return levels;
}

/** Noul: optional; when sent, an object with exactly the keys `true` and `false`. */
function noulCriteria(criteria: unknown, at: string): { yes: unknown; no: unknown } | undefined {
  const param = `${at}.criteria`;
  if (criteria === undefined) return undefined;
  if (!isPlainObject(criteria)) throw inputError(`${param} must be an object with exactly the keys "true" and "false"`, ErrorCode.InvalidType, param);
  const keys = Object.keys(criteria).sort();
  if (keys.length !== 2 || keys[0] !== 'false' || keys[1] !== 'true') {
    throw inputError(`${param} must have exactly the keys "true" and "false"`, ErrorCode.InvalidValue, param);
  }
  for (const key of ['true', 'false']) {
    if (!isStructured(ownValue(criteria, key))) {
      throw inputError(`${param}.${key} must be a string, an object or an array`, ErrorCode.InvalidType, `${param}.${key}`);
    }
  }
  return { yes: ownValue(criteria, 'true'), no: ownValue(criteria, 'false') };
}

/** A string, an object or an array (empty ones included); not null, numbers or booleans. */
function isStructured(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'object' && value !== null);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property only: never an inherited one such as `constructor` or `toString`. */
function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}
