/**
 * The decision endpoint (`POST /v1/systemone`, alias `/v1/decisions`; `GET` describes the model):
 * the request the router validates with (compiled once with ajv), the answer it builds and the
 * model description the edge serves. `/v1/openapi.json` publishes these schemas as they are.
 *
 * `x-decision-error` on a schema gives, per keyword, the decision error a problem there becomes:
 * `[code, message, param?]`, where `{param}` is the path at fault (`questions.<id>.criteria`),
 * `{at}` the path of the schema's own value and `{count}` how many keys or items it has.
 */
import { type Static, type TSchema, Type } from 'typebox';
import { ErrorCode } from '@gateway/errors';
import { Dict, Literals } from '../schema/schema-helpers';

export const QUESTION_TYPES = ['choice', 'score', 'noul'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];
export const MAX_CHOICE_OPTIONS = 255;
export const MAX_SCORE_LEVELS = 10;

export const DECISION_ERROR = 'x-decision-error';
type DecisionErrors = Partial<Record<string, [ErrorCode, string, string?]>>;

/** `schema` with the decision errors of its keywords. */
const failing = <T extends TSchema>(schema: T, errors: DecisionErrors): T => ({ ...schema, [DECISION_ERROR]: errors }) as T;

const STRUCTURED = 'must be a string, an object or an array';

/** A string, an object or an array (empty ones included); not null, numbers or booleans. */
const Structured = (description?: string, problem = STRUCTURED) =>
  Type.Unsafe<unknown>({
    type: ['string', 'object', 'array'],
    ...(description ? { description } : {}),
    [DECISION_ERROR]: { type: [ErrorCode.InvalidType, `{param} ${problem}`] },
  });

const required = (suffix = ''): DecisionErrors => ({ required: [ErrorCode.MissingRequiredParameter, `{param} is required${suffix}`] });

const ChoiceCriteria = failing(
  Dict(Type.Unsafe<unknown>({ ...Structured(undefined, 'must be a string, an object, an array or null'), type: ['string', 'object', 'array', 'null'] }), {
    minProperties: 1,
    maxProperties: MAX_CHOICE_OPTIONS,
  }),
  {
    type: [ErrorCode.InvalidType, '{param} must be an object mapping option ids to descriptions'],
    minProperties: [ErrorCode.InvalidValue, `{param} must have 1 to ${MAX_CHOICE_OPTIONS} options (got {count})`],
    maxProperties: [ErrorCode.InvalidValue, `{param} must have 1 to ${MAX_CHOICE_OPTIONS} options (got {count})`],
  },
);

const LEVELS = `{param} must have 1 to ${MAX_SCORE_LEVELS} levels (got {count})`;
const ScoreCriteria = Type.Unsafe<unknown[] | Record<string, unknown>>({
  type: ['array', 'object'],
  minItems: 1,
  maxItems: MAX_SCORE_LEVELS,
  items: Structured(),
  'x-level-keys': true,
  minProperties: 1,
  maxProperties: MAX_SCORE_LEVELS,
  additionalProperties: Structured(),
  [DECISION_ERROR]: {
    type: [ErrorCode.InvalidType, '{param} must be an array of level descriptions (lowest first)'],
    'x-level-keys': [ErrorCode.InvalidValue, '{param} as an object must have exactly the keys "0", "1", ... with no gaps'],
    minItems: [ErrorCode.InvalidValue, LEVELS],
    maxItems: [ErrorCode.InvalidValue, LEVELS],
    minProperties: [ErrorCode.InvalidValue, LEVELS],
    maxProperties: [ErrorCode.InvalidValue, LEVELS],
  },
});

const NOUL_KEYS = '{at} must have exactly the keys "true" and "false"';
const NoulCriteria = failing(Type.Object({ true: Structured(), false: Structured() }, { additionalProperties: false }), {
  type: [ErrorCode.InvalidType, '{param} must be an object with exactly the keys "true" and "false"'],
  required: [ErrorCode.InvalidValue, NOUL_KEYS, '{at}'],
  additionalProperties: [ErrorCode.InvalidValue, NOUL_KEYS, '{at}'],
});

const criteriaOf = (type: QuestionType, criteria: object, requiredSuffix?: string) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  then: { ...(requiredSuffix ? { required: ['criteria'], [DECISION_ERROR]: required(requiredSuffix) } : {}), properties: { criteria } },
});

export const DecisionQuestion = failing(
  Type.Object(
    {
      type: failing(Literals(QUESTION_TYPES, { description: 'Case-sensitive.' }), {
        type: [ErrorCode.InvalidValue, `{param} must be one of ${QUESTION_TYPES.join(', ')}`],
        enum: [ErrorCode.InvalidValue, `{param} must be one of ${QUESTION_TYPES.join(', ')}`],
      }),
      instructions: Structured('The question. The question id only labels the answer.'),
      criteria: Type.Optional(
        Type.Unsafe<unknown>({
          description:
            '`choice` (required): an object mapping 1 to 255 option ids to descriptions. `score` (required): an array of 1 to 10 level descriptions, ' +
            'lowest first (or an object keyed `0`, `1`, … without gaps). `noul` (optional): an object with exactly the keys `true` and `false`. ' +
            'A description is a string, object or array (a `choice` description may also be null).',
        }),
      ),
    },
    {
      allOf: [
        criteriaOf('choice', ChoiceCriteria, ' for a choice question'),
        criteriaOf('score', ScoreCriteria, ' for a score question'),
        criteriaOf('noul', NoulCriteria),
      ],
    },
  ),
  { ...required(), type: [ErrorCode.InvalidType, '{param} must be an object with type, instructions and criteria'] },
);

export const DecisionRequestBody = failing(
  Type.Object({
    model: Type.Optional(
      failing(
        Type.String({
          default: 'jev',
          description: 'Accepted: `jev`, `jev-latest`, `<vendor>/jev`, `<vendor>/jev-latest`; version-pinned ids are a 400. Proxy keys must send it.',
        }),
        { type: [ErrorCode.InvalidType, 'model must be a string'] },
      ),
    ),
    state: Structured('The facts: any JSON string, object or array, even empty. Numbers, booleans and null are rejected.'),
    questions: failing(
      Dict(DecisionQuestion, {
        minProperties: 1,
        propertyNames: failing(Type.String({ minLength: 1, not: { const: '__proto__' } }), {
          minLength: [ErrorCode.InvalidValue, 'A question id must not be empty'],
          not: [ErrorCode.InvalidValue, 'A question id must not be __proto__'],
        }),
        description: 'Question id → question. `state` and `questions` together may not exceed 32,000 tokens.',
      }),
      {
        type: [ErrorCode.InvalidType, '{param} must be an object mapping question ids to questions'],
        minProperties: [ErrorCode.InvalidValue, '{param} must contain at least one question'],
      },
    ),
  }),
  { ...required(), type: [ErrorCode.InvalidBody, 'Request body must be a JSON object'] },
);
export type DecisionRequestBody = Static<typeof DecisionRequestBody>;

export const DecisionAnswer = Type.Object(
  {
    type: Literals(QUESTION_TYPES),
    choice: Type.Optional(Type.String({ description: '`choice`: the selected option id.' })),
    score: Type.Optional(Type.Number({ description: '`score`: expected level on the 0-based scale, as a decimal.' })),
    legend: Type.Optional(Dict(Type.Unknown(), { description: '`score`: level index → the description sent.' })),
    probabilities: Type.Optional(
      Dict(Type.Number(), {
        description: '`choice`: option id → probability, for every option; `score`: level index → probability. Two decimals.',
      }),
    ),
    noul: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: '`noul`: probability of yes.' })),
    confidence: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: '`choice`, `score`: certainty, not the largest probability; absent means unknown.' }),
    ),
  },
  { description: 'One answer per question id; the fields depend on the question type.' },
);
export type DecisionAnswer = Static<typeof DecisionAnswer>;

export const Decision = Type.Object({
  id: Type.String({ example: 'dec_…' }),
  object: Literals(['decision']),
  model: Type.String({ example: 'jev' }),
  answers: Dict(DecisionAnswer, { description: 'Question id → answer.' }),
  usage: Type.Object({
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer({ description: 'Always 0: output is free.' }),
    total_tokens: Type.Integer(),
  }),
});
export type Decision = Static<typeof Decision>;

/** The model's public description (`GET /v1/systemone`): field names are ours (README, API notes). */
export const DecisionModel = Type.Object({
  object: Literals(['decision.model']),
  model: Type.String({ example: 'jev' }),
  context_length: Type.Integer({ description: 'Tokens of `state` and `questions` together.' }),
  question_types: Type.Array(Type.String(), { example: ['choice', 'score', 'noul'] }),
  pricing: Type.Object({
    input: Type.Number({ example: 0.042 }),
    output: Type.Number({ example: 0 }),
    unit: Type.String({ example: 'credits per million tokens' }),
  }),
});
export type DecisionModel = Static<typeof DecisionModel>;
