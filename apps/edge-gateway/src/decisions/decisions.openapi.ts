import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import type { DecisionModelInfo } from './decisions.controller';

// The decision body is validated by the router (apps/inference-router/src/decisions); these classes
// describe the same rules for the API reference.

const ANY_JSON_TEXT = [{ type: 'string' }, { type: 'object' }, { type: 'array' }];

@ApiSchema({ name: 'DecisionQuestion' })
export class DecisionQuestionSchema {
  @ApiProperty({ enum: ['choice', 'score', 'noul'], description: 'Case-sensitive.' })
  type: 'choice' | 'score' | 'noul';

  @ApiProperty({ oneOf: ANY_JSON_TEXT, description: 'The question. The question id only labels the answer.' })
  instructions: unknown;

  @ApiPropertyOptional({
    oneOf: [{ type: 'object' }, { type: 'array' }],
    description:
      '`choice` (required): an object mapping 1 to 255 option ids to descriptions. `score` (required): an array of 1 to 10 level descriptions, ' +
      'lowest first (or an object keyed `0`, `1`, … without gaps). `noul` (optional): an object with exactly the keys `true` and `false`. ' +
      'A description is a string, object or array (a `choice` description may also be null).',
  })
  criteria?: unknown;
}

// `propertyNames` is JSON Schema that @nestjs/swagger's types do not list; it is written as given.
const QUESTIONS = {
  type: 'object',
  minProperties: 1,
  propertyNames: { minLength: 1, not: { const: '__proto__' } },
  additionalProperties: { $ref: getSchemaPath(DecisionQuestionSchema) },
  description: 'Question id → question. `state` and `questions` together may not exceed 32,000 tokens.',
} as ApiPropertyOptions;

@ApiSchema({ name: 'DecisionRequest' })
export class DecisionRequestSchema {
  @ApiPropertyOptional({
    default: 'jev',
    description: 'Accepted: `jev`, `jev-latest`, `<vendor>/jev`, `<vendor>/jev-latest`; version-pinned ids are a 400. Proxy keys must send it.',
  })
  model?: string;

  @ApiProperty({ oneOf: ANY_JSON_TEXT, description: 'The facts: any JSON string, object or array, even empty. Numbers, booleans and null are rejected.' })
  state: unknown;

  @ApiProperty(QUESTIONS)
  questions: Record<string, DecisionQuestionSchema>;
}

@ApiSchema({ name: 'DecisionAnswer', description: 'One answer per question id; the fields depend on the question type.' })
export class DecisionAnswerSchema {
  @ApiProperty({ enum: ['choice', 'score', 'noul'] })
  type: 'choice' | 'score' | 'noul';

  @ApiPropertyOptional({ description: '`choice`: the selected option id.' })
  choice?: string;

  @ApiPropertyOptional({ description: '`score`: expected level on the 0-based scale, as a decimal.' })
  score?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`score`: level index → the description sent.' })
  legend?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number' },
    description: '`choice`: option id → probability, for every option; `score`: level index → probability. Two decimals.',
  })
  probabilities?: Record<string, number>;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: '`noul`: probability of yes.' })
  noul?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: '`choice`, `score`: certainty, not the largest probability; absent means unknown.' })
  confidence?: number;
}

class DecisionUsage {
  @ApiProperty({ type: 'integer' })
  input_tokens: number;

  @ApiProperty({ type: 'integer', description: 'Always 0: output is free.' })
  output_tokens: number;

  @ApiProperty({ type: 'integer' })
  total_tokens: number;
}

@ApiSchema({ name: 'Decision' })
export class DecisionResponseSchema {
  @ApiProperty({ example: 'dec_…' })
  id: string;

  @ApiProperty({ enum: ['decision'] })
  object: 'decision';

  @ApiProperty({ example: 'jev' })
  model: string;

  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(DecisionAnswerSchema) }, description: 'Question id → answer.' })
  answers: Record<string, DecisionAnswerSchema>;

  @ApiProperty({ type: DecisionUsage })
  usage: DecisionUsage;
}

class DecisionPricing {
  @ApiProperty({ example: 0.042 })
  input: number;

  @ApiProperty({ example: 0 })
  output: number;

  @ApiProperty({ example: 'credits per million tokens' })
  unit: string;
}

@ApiSchema({ name: 'DecisionModel' })
export class DecisionModelInfoSchema implements DecisionModelInfo {
  @ApiProperty({ enum: ['decision.model'] })
  object: 'decision.model';

  @ApiProperty({ example: 'jev' })
  model: string;

  @ApiProperty({ type: 'integer', description: 'Tokens of `state` and `questions` together.' })
  context_length: number;

  @ApiProperty({ type: [String], example: ['choice', 'score', 'noul'] })
  question_types: string[];

  @ApiProperty({ type: DecisionPricing })
  pricing: DecisionPricing;
}
