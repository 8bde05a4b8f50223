import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { EFFORT_LEVELS, JSON_SCHEMA_OBJECT, MODEL_DESCRIPTION } from './common.openapi';

// OpenAI Responses, as the router parses it (apps/inference-router/src/client-formats/parse-responses.ts)
// and renders it (render-response.ts). Nothing is stored: every request carries the whole conversation.

@ApiSchema({
  name: 'ResponsesInputItem',
  description: 'An item of `input`: a message (the default `type`), a `function_call`, its `function_call_output`, or replayed `reasoning`.',
})
export class ResponsesInputItemSchema {
  @ApiPropertyOptional({ enum: ['message', 'function_call', 'function_call_output', 'reasoning'], default: 'message' })
  type?: string;

  @ApiPropertyOptional({ enum: ['user', 'assistant', 'system', 'developer'], description: 'Messages.' })
  role?: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
    description: 'Messages: a string, or parts of type `input_text`, `output_text`, `refusal` or `input_image` (`image_url`).',
  })
  content?: unknown;

  @ApiPropertyOptional({ description: '`function_call`, `function_call_output`.' })
  call_id?: string;

  @ApiPropertyOptional({ description: '`function_call`.' })
  name?: string;

  @ApiPropertyOptional({ description: '`function_call`: a JSON string.' })
  arguments?: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
    description: '`function_call_output`.',
  })
  output?: unknown;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true }, description: '`reasoning`: `{type, text}` parts.' })
  summary?: unknown[];
}

@ApiSchema({ name: 'ResponsesTool', description: 'A function tool, flat (`{type, name, …}`) or nested under `function`. Hosted tools are skipped.' })
export class ResponsesToolSchema {
  @ApiProperty({ example: 'function' })
  type: string;

  @ApiPropertyOptional()
  name?: string;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional(JSON_SCHEMA_OBJECT)
  parameters?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`{name, description, parameters}`.' })
  function?: Record<string, unknown>;
}

class ResponsesReasoningRequest {
  @ApiPropertyOptional({ enum: EFFORT_LEVELS })
  effort?: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['auto', 'concise', 'detailed'] }],
    description: '`false`: reason, but do not return the reasoning.',
  })
  summary?: boolean | string;
}

@ApiSchema({ name: 'ResponsesRequest' })
@ApiExtraModels(ResponsesInputItemSchema)
export class ResponsesRequestSchema {
  @ApiProperty({ description: MODEL_DESCRIPTION, example: 'sim-chat' })
  model: string;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { $ref: getSchemaPath(ResponsesInputItemSchema) } }] })
  input: unknown;

  @ApiPropertyOptional({ description: 'System instructions.' })
  instructions?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1 })
  max_output_tokens?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 2, default: 1 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, default: 1 })
  top_p?: number;

  @ApiPropertyOptional({ default: false })
  stream?: boolean;

  @ApiPropertyOptional({ type: [ResponsesToolSchema] })
  tools?: ResponsesToolSchema[];

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['auto', 'none', 'required'] },
      { type: 'object', additionalProperties: true },
    ],
    description: '`auto`, `none`, `required`, or `{type: function, name}`.',
  })
  tool_choice?: unknown;

  @ApiPropertyOptional({ default: false, description: 'Accepted for compatibility; no web search is run.' })
  web_search?: boolean;

  @ApiPropertyOptional({ type: ResponsesReasoningRequest })
  reasoning?: ResponsesReasoningRequest;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Echoed back on the response.' })
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ type: [String], description: '`message.output_text.logprobs` asks for log probabilities.' })
  include?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 20 })
  top_logprobs?: number;

  @ApiPropertyOptional()
  user?: string;

  @ApiPropertyOptional({ description: 'Refused with 400: responses are not stored; send the whole conversation in `input`.', deprecated: true })
  previous_response_id?: string;
}

class ResponsesOutputText {
  @ApiProperty({ enum: ['output_text'] })
  type: 'output_text';

  @ApiProperty()
  text: string;

  @ApiProperty({ type: 'array', items: { type: 'object' } })
  annotations: unknown[];

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'When `include` asked for them.' })
  logprobs?: unknown[];
}

@ApiSchema({ name: 'ResponsesOutputMessage' })
export class ResponsesOutputMessageSchema {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['message'] })
  type: 'message';

  @ApiProperty({ enum: ['in_progress', 'completed'] })
  status: string;

  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: [ResponsesOutputText] })
  content: ResponsesOutputText[];
}

class ResponsesSummaryText {
  @ApiProperty({ enum: ['summary_text'] })
  type: 'summary_text';

  @ApiProperty()
  text: string;
}

@ApiSchema({ name: 'ResponsesReasoningItem' })
export class ResponsesReasoningItemSchema {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['reasoning'] })
  type: 'reasoning';

  @ApiProperty({ type: [ResponsesSummaryText] })
  summary: ResponsesSummaryText[];
}

@ApiSchema({ name: 'ResponsesFunctionCall' })
export class ResponsesFunctionCallSchema {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['function_call'] })
  type: 'function_call';

  @ApiProperty({ enum: ['in_progress', 'completed'] })
  status: string;

  @ApiProperty()
  call_id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'A JSON string.' })
  arguments: string;
}

class ResponsesInputTokensDetails {
  @ApiProperty({ type: 'integer' })
  cached_tokens: number;
}

class ResponsesOutputTokensDetails {
  @ApiProperty({ type: 'integer' })
  reasoning_tokens: number;
}

class ResponsesUsage {
  @ApiProperty({ type: 'integer' })
  input_tokens: number;

  @ApiProperty({ type: ResponsesInputTokensDetails })
  input_tokens_details: ResponsesInputTokensDetails;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiProperty({ type: ResponsesOutputTokensDetails })
  output_tokens_details: ResponsesOutputTokensDetails;

  @ApiProperty({ type: 'integer' })
  total_tokens: number;
}

@ApiSchema({ name: 'Response', description: "A response object; the request's settings are echoed back as OpenAI does." })
@ApiExtraModels(ResponsesOutputMessageSchema, ResponsesReasoningItemSchema, ResponsesFunctionCallSchema)
export class ResponseObjectSchema {
  @ApiProperty({ example: 'resp_…' })
  id: string;

  @ApiProperty({ enum: ['response'] })
  object: 'response';

  @ApiProperty({ type: 'integer', description: 'Unix seconds.' })
  created_at: number;

  @ApiProperty({ enum: ['in_progress', 'completed', 'incomplete'], description: '`incomplete` when the output limit cut the reply.' })
  status: string;

  @ApiProperty()
  model: string;

  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [
        { $ref: getSchemaPath(ResponsesOutputMessageSchema) },
        { $ref: getSchemaPath(ResponsesReasoningItemSchema) },
        { $ref: getSchemaPath(ResponsesFunctionCallSchema) },
      ],
    },
  })
  output: unknown[];

  @ApiProperty({ type: ResponsesUsage, nullable: true, description: '`null` while in progress.' })
  usage: ResponsesUsage | null;

  @ApiProperty({ type: 'null', description: 'Failures are HTTP errors, never a response object.' })
  error: null;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: '`{reason}` when `status` is `incomplete`.' })
  incomplete_details: Record<string, unknown> | null;

  @ApiProperty({ type: 'string', nullable: true })
  instructions: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  max_output_tokens: number | null;

  @ApiProperty()
  parallel_tool_calls: boolean;

  @ApiProperty({ type: 'null', description: 'Nothing is stored.' })
  previous_response_id: null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: '`{effort, summary}` as requested.' })
  reasoning: Record<string, unknown>;

  @ApiProperty({ description: 'Always false: nothing is stored.' })
  store: boolean;

  @ApiProperty()
  temperature: number;

  @ApiProperty({ type: 'object', additionalProperties: true, description: '`{format: {type: text}}`.' })
  text: Record<string, unknown>;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }] })
  tool_choice: unknown;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'The function tools offered, flat.' })
  tools: unknown[];

  @ApiProperty()
  top_p: number;

  @ApiProperty({ enum: ['disabled'] })
  truncation: string;

  @ApiProperty({ type: 'string', nullable: true })
  user: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: "The request's `metadata`, echoed." })
  metadata: Record<string, unknown>;
}
