import { DECISION_MAX_INPUT_TOKENS, type KeyType } from '@gateway/contracts';

export { DECISION_MAX_INPUT_TOKENS };
import { countTokens } from '../providers/token-count';
import { classifyDecisionModel, DECISION_MODEL_ID } from './decision-model';

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

/** Combined `state` + `questions` limit (spec "Limits"), counted as `countDecisionTokens` does. */
export const MAX_CHOICE_OPTIONS = 255;
export const MAX_SCORE_LEVELS = 10;
export const QUESTION_TYPES = ['choice', 'score', 'noul'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** `error.code` values of decision 400s. */
export type DecisionInputErrorCode =
  | 'invalid_body'
  | 'missing_required_parameter'
  | 'invalid_type'
  | 'invalid_value'
  | 'model_not_supported'
  | 'model_version_not_served'
  | 'context_length_exceeded';

export class DecisionInputError extends Error {
  readonly status = 400;

  constructor(
    message: string,
    readonly code: DecisionInputErrorCode,
    /** The offending field; absent only when the body itself is not an object. */
    readonly param?: string,
    /** Counted input tokens, when the refusal came after counting (over the limit). */
    readonly inputTokens = 0,
  ) {
    super(message);
    this.name = 'DecisionInputError';
  }
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

/** Validates a decision body; throws `DecisionInputError` (400) naming the field at fault. */
export function validateDecisionRequest(body: unknown, options: DecisionValidationOptions): ValidDecision {
  if (!isPlainObject(body)) throw new DecisionInputError('Request body must be a JSON object', 'invalid_body');
  validateModel(body['model'], options);
  const state = body['state'];
  validateState(state);
  const rawQuestions = body['questions'];
  const questions = validateQuestions(rawQuestions);
  const inputTokens = countDecisionTokens(state, rawQuestions);
  const limit = options.maxInputTokens ?? DECISION_MAX_INPUT_TOKENS;
  if (inputTokens > limit) {
    throw new DecisionInputError(
      `state and questions together are ${inputTokens} tokens, over the limit of ${limit} tokens`,
      'context_length_exceeded',
      'state',
      inputTokens,
    );
  }
  return { model: DECISION_MODEL_ID, state, questions, inputTokens };
}

function validateModel(model: unknown, options: DecisionValidationOptions): void {
  if (model === undefined) {
    if (options.keyType === 'proxy') {
      throw new DecisionInputError(`Proxy keys must send model (for example "${DECISION_MODEL_ID}")`, 'missing_required_parameter', 'model');
    }
    return;
  }
  if (typeof model !== 'string') throw new DecisionInputError('model must be a string', 'invalid_type', 'model');
  const kind = classifyDecisionModel(model, options.vendor);
  if (kind === 'pinned') {
    throw new DecisionInputError(
      `The model '${model}' is a pinned version: only the current version is served. Use '${DECISION_MODEL_ID}' or '${DECISION_MODEL_ID}-latest'`,
      'model_version_not_served',
      'model',
    );
  }
  if (kind === 'other') {
    throw new DecisionInputError(
      `The model '${model}' is not supported by the decision endpoint. Use '${DECISION_MODEL_ID}', '${DECISION_MODEL_ID}-latest', '${options.vendor}/${DECISION_MODEL_ID}' or '${options.vendor}/${DECISION_MODEL_ID}-latest'`,
      'model_not_supported',
      'model',
    );
  }
}

function validateState(state: unknown): void {
  if (state === undefined) throw new DecisionInputError('state is required', 'missing_required_parameter', 'state');
  if (!isStructured(state)) throw new DecisionInputError('state must be a string, an object or an array', 'invalid_type', 'state');
}

function validateQuestions(questions: unknown): DecisionQuestion[] {
  if (questions === undefined) throw new DecisionInputError('questions is required', 'missing_required_parameter', 'questions');
  if (!isPlainObject(questions)) throw new DecisionInputError('questions must be an object mapping question ids to questions', 'invalid_type', 'questions');
  // Object.keys on the raw parsed object: sees an own `__proto__` key, which JSON.parse keeps.
  const ids = Object.keys(questions);
  if (ids.length === 0) throw new DecisionInputError('questions must contain at least one question', 'invalid_value', 'questions');
  return ids.map((id) => validateQuestion(id, questions));
}

function validateQuestion(id: string, questions: Record<string, unknown>): DecisionQuestion {
  const at = `questions.${id}`;
  if (id.length === 0) throw new DecisionInputError('A question id must not be empty', 'invalid_value', at);
  if (id === '__proto__') throw new DecisionInputError('A question id must not be __proto__', 'invalid_value', at);
  const question = ownValue(questions, id);
  if (!isPlainObject(question)) throw new DecisionInputError(`${at} must be an object with type, instructions and criteria`, 'invalid_type', at);

  const type = ownValue(question, 'type');
  if (type === undefined) throw new DecisionInputError(`${at}.type is required`, 'missing_required_parameter', `${at}.type`);
  if (!(QUESTION_TYPES as readonly unknown[]).includes(type)) {
    throw new DecisionInputError(`${at}.type must be one of ${QUESTION_TYPES.join(', ')}`, 'invalid_value', `${at}.type`);
  }
  const instructions = ownValue(question, 'instructions');
  if (instructions === undefined) throw new DecisionInputError(`${at}.instructions is required`, 'missing_required_parameter', `${at}.instructions`);
  if (!isStructured(instructions)) {
    throw new DecisionInputError(`${at}.instructions must be a string, an object or an array`, 'invalid_type', `${at}.instructions`);
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
  if (criteria === undefined) throw new DecisionInputError(`${param} is required for a choice question`, 'missing_required_parameter', param);
  if (!isPlainObject(criteria)) throw new DecisionInputError(`${param} must be an object mapping option ids to descriptions`, 'invalid_type', param);
  const ids = Object.keys(criteria);
  if (ids.length < 1 || ids.length > MAX_CHOICE_OPTIONS) {
    throw new DecisionInputError(`${param} must have 1 to ${MAX_CHOICE_OPTIONS} options (got ${ids.length})`, 'invalid_value', param);
  }
  return ids.map((option) => {
    const description = ownValue(criteria, option);
    if (description !== null && !isStructured(description)) {
      throw new DecisionInputError(`${param}.${option} must be a string, an object, an array or null`, 'invalid_type', `${param}.${option}`);
    }
    return { id: option, description };
  });
}

/** Score: an array of 1..10 level descriptions, or an object keyed exactly "0".."n-1". */
function scoreLevels(criteria: unknown, at: string): unknown[] {
  const param = `${at}.criteria`;
  if (criteria === undefined) throw new DecisionInputError(`${param} is required for a score question`, 'missing_required_parameter', param);
  let levels: unknown[];
  if (Array.isArray(criteria)) {
    levels = criteria;
  } else if (isPlainObject(criteria)) {
    const keys = Object.keys(criteria);
    const expected = keys.map((_, index) => String(index));
    // Integer-like keys come first, ascending, from Object.keys; anything else sorts after them.
    if (keys.some((key, index) => key !== expected[index])) {
      throw new DecisionInputError(`${param} as an object must have exactly the keys "0", "1", ... with no gaps`, 'invalid_value', param);
    }
    levels = keys.map((key) => ownValue(criteria, key));
  } else {
    throw new DecisionInputError(`${param} must be an array of level descriptions (lowest first)`, 'invalid_type', param);
  }
  if (levels.length < 1 || levels.length > MAX_SCORE_LEVELS) {
    throw new DecisionInputError(`${param} must have 1 to ${MAX_SCORE_LEVELS} levels (got ${levels.length})`, 'invalid_value', param);
  }
  levels.forEach((description, index) => {
    if (!isStructured(description)) {
      throw new DecisionInputError(`${param}.${index} must be a string, an object or an array`, 'invalid_type', `${param}.${index}`);
    }
  });
  return levels;
}

/** Noul: optional; when sent, an object with exactly the keys `true` and `false`. */
function noulCriteria(criteria: unknown, at: string): { yes: unknown; no: unknown } | undefined {
  const param = `${at}.criteria`;
  if (criteria === undefined) return undefined;
  if (!isPlainObject(criteria)) throw new DecisionInputError(`${param} must be an object with exactly the keys "true" and "false"`, 'invalid_type', param);
  const keys = Object.keys(criteria).sort();
  if (keys.length !== 2 || keys[0] !== 'false' || keys[1] !== 'true') {
    throw new DecisionInputError(`${param} must have exactly the keys "true" and "false"`, 'invalid_value', param);
  }
  for (const key of ['true', 'false']) {
    if (!isStructured(ownValue(criteria, key))) {
      throw new DecisionInputError(`${param}.${key} must be a string, an object or an array`, 'invalid_type', `${param}.${key}`);
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
