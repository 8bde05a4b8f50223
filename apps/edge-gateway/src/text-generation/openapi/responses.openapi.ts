import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { EFFORT_LEVELS, JSON_SCHEMA_OBJECT, MODEL_DESCRIPTION } from './common.openapi';

// OpenAI Responses, as the router parses it (apps/inference-router/src/client-formats/parse-responses.ts)
// and renders it (render-response.ts). Replies are stored unless `store: false` (see docs/api.md).

@ApiSchema({
  name: 'ResponsesInputItem',
  description:
    'An item of `input`: a message (the default `type`), a `function_call`, its `function_call_output`, replayed `reasoning`, or an `item_reference` (`{type, id}`) to an item of a stored response.',
})
export class ResponsesInputItemSchema {
  @ApiPropertyOptional({ enum: ['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'], default: 'message' })
  type?: string;

  @ApiPropertyOptional({ description: 'The item id: required for `item_reference` (an input or output item of a stored response of the caller).' })
  id?: string;

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

class ResponsesTextFormat {
  @ApiProperty({ enum: ['text', 'json_object', 'json_schema'] })
  type: string;

  @ApiPropertyOptional({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '`json_schema`: required.' })
  name?: string;

  @ApiPropertyOptional({ ...JSON_SCHEMA_OBJECT, description: '`json_schema`: required; an object, at most 64 levels deep and 100,000 characters.' })
  schema?: Record<string, unknown>;

  @ApiPropertyOptional()
  strict?: boolean;

  @ApiPropertyOptional()
  description?: string;
}

class ResponsesTextConfig {
  @ApiPropertyOptional({
    type: ResponsesTextFormat,
    description:
      'Structured output: the output text is JSON (`json_object`), valid against the schema too (`json_schema`). Echoed in the response. A format the model cannot honour is a 400 naming `text.format`.',
  })
  format?: ResponsesTextFormat;
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

  @ApiPropertyOptional({ type: ResponsesTextConfig })
  text?: ResponsesTextConfig;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Echoed back on the response.' })
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ type: [String], description: '`message.output_text.logprobs` asks for log probabilities.' })
  include?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 20 })
  top_logprobs?: number;

  @ApiPropertyOptional()
  user?: string;

  @ApiPropertyOptional({
    description:
      "A stored response of the caller: its input and output items come before this request's `input` (its `instructions` do not carry over). Unknown, expired or another key's: 404.",
  })
  previous_response_id?: string;

  @ApiPropertyOptional({
    default: true,
    description: 'Store the reply for `GET /v1/responses/{id}`, `previous_response_id` and `item_reference`; `false` stores nothing.',
  })
  store?: boolean;
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

  @ApiProperty({ type: 'string', nullable: true, description: 'As requested.' })
  previous_response_id: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: '`{effort, summary}` as requested.' })
  reasoning: Record<string, unknown>;

  @ApiProperty({ description: "Whether the reply was stored (the request's `store`, default true)." })
  store: boolean;

  @ApiProperty()
  temperature: number;

  @ApiProperty({ type: 'object', additionalProperties: true, description: "`{format}`: the request's `text.format`, `{type: text}` by default." })
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

@ApiSchema({ name: 'DeletedResponse' })
export class DeletedResponseSchema {
  @ApiProperty({ example: 'resp_…' })
  id: string;

  @ApiProperty({ enum: ['response'] })
  object: 'response';

  @ApiProperty({ enum: [true] })
  deleted: true;
}

@ApiSchema({ name: 'ResponseInputItemList', description: "A page of a stored response's input items, OpenAI's list shape." })
export class ResponseInputItemListSchema {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true, required: ['id', 'type'], properties: { id: { type: 'string' }, type: { type: 'string' } } },
    description: 'Items with their ids: messages (content as parts), function calls and their outputs, reasoning.',
  })
  data: Record<string, unknown>[];

  @ApiProperty({ type: 'string', nullable: true })
  first_id: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_id: string | null;

  @ApiProperty()
  has_more: boolean;
}
