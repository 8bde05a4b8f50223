import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { JSON_SCHEMA_OBJECT, MODEL_DESCRIPTION } from './common.openapi';

// Anthropic Messages, as the router parses it (apps/inference-router/src/client-formats/parse-messages.ts)
// and renders it (render-response.ts).

const CACHE_CONTROL = {
  type: 'object',
  properties: { type: { type: 'string', enum: ['ephemeral'] }, ttl: { type: 'string', enum: ['5m', '1h'] } },
  description: 'Accepted; the router does not cache.',
} as const;

@ApiSchema({
  name: 'MessagesContentBlock',
  description:
    'User (and mid-conversation system) turns: `text`, `image`, `document`, `tool_result`, `mid_conv_system`, `tool_addition`, `tool_removal`. ' +
    'Assistant turns: `text`, `thinking`, `redacted_thinking`, `tool_use`.',
})
export class MessagesContentBlockSchema {
  @ApiProperty()
  type: string;

  @ApiPropertyOptional({ description: '`text`.' })
  text?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: '`image`: `{type: base64, media_type, data}` or `{type: url, url}`; `document`: `{type: text, data}` or `{type: content, content}`.',
  })
  source?: Record<string, unknown>;

  @ApiPropertyOptional({ description: '`tool_result`.' })
  tool_use_id?: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
    description: '`tool_result`, `mid_conv_system`.',
  })
  content?: unknown;

  @ApiPropertyOptional({ description: '`tool_result`.' })
  is_error?: boolean;

  @ApiPropertyOptional({ description: '`thinking`.' })
  thinking?: string;

  @ApiPropertyOptional({ description: '`thinking`.' })
  signature?: string;

  @ApiPropertyOptional({ description: '`tool_use`.' })
  id?: string;

  @ApiPropertyOptional({ description: '`tool_use`.' })
  name?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`tool_use`.' })
  input?: Record<string, unknown>;

  @ApiPropertyOptional(CACHE_CONTROL)
  cache_control?: Record<string, unknown>;
}

@ApiSchema({ name: 'MessagesMessage' })
@ApiExtraModels(MessagesContentBlockSchema)
export class MessagesMessageSchema {
  @ApiProperty({
    enum: ['user', 'assistant', 'system'],
    description: '`system` is a mid-conversation instruction and may not come first. A last `assistant` turn is continued.',
  })
  role: string;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { $ref: getSchemaPath(MessagesContentBlockSchema) } }] })
  content: unknown;
}

class MessagesTextBlock {
  @ApiProperty({ enum: ['text'] })
  type: 'text';

  @ApiProperty()
  text: string;

  @ApiPropertyOptional(CACHE_CONTROL)
  cache_control?: Record<string, unknown>;
}

class MessagesThinkingConfig {
  @ApiProperty({ enum: ['enabled', 'adaptive', 'disabled'] })
  type: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Required with `enabled`.' })
  budget_tokens?: number;

  @ApiPropertyOptional({ enum: ['summarized', 'omitted'], description: '`omitted`: think, but do not return it.' })
  display?: string;
}

@ApiSchema({ name: 'MessagesTool', description: 'A custom tool. Server tools (a versioned `type`, no `input_schema`) are skipped.' })
export class MessagesToolSchema {
  @ApiPropertyOptional({ description: "`custom`, or a server tool's versioned type." })
  type?: string;

  @ApiProperty()
  name: string;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional({ ...JSON_SCHEMA_OBJECT, description: 'Required for custom tools.' })
  input_schema?: Record<string, unknown>;

  @ApiPropertyOptional(CACHE_CONTROL)
  cache_control?: Record<string, unknown>;
}

class MessagesToolChoice {
  @ApiProperty({ enum: ['auto', 'any', 'tool', 'none'] })
  type: string;

  @ApiPropertyOptional({ description: 'With `tool`.' })
  name?: string;

  @ApiPropertyOptional()
  disable_parallel_tool_use?: boolean;
}

class MessagesMetadata {
  @ApiPropertyOptional({ description: 'An opaque id for abuse tracking; no personal data.' })
  user_id?: string;
}

class MessagesOutputFormat {
  @ApiProperty({ enum: ['json_schema'] })
  type: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The JSON Schema the answer must match (an object; at most 64 levels deep and 100,000 characters).',
  })
  schema: Record<string, unknown>;
}

class MessagesOutputConfig {
  @ApiPropertyOptional({ enum: ['low', 'medium', 'high'] })
  effort?: string;

  @ApiPropertyOptional({
    type: MessagesOutputFormat,
    description:
      'Structured output: the answer is one `text` block of JSON valid against the schema. A format the model cannot honour is a 400 naming `output_config.format`.',
  })
  format?: MessagesOutputFormat;
}

@ApiSchema({ name: 'MessagesRequest' })
@ApiExtraModels(MessagesTextBlock)
export class MessagesRequestSchema {
  @ApiProperty({ description: MODEL_DESCRIPTION, example: 'sim-chat' })
  model: string;

  @ApiProperty({ type: [MessagesMessageSchema], minItems: 1 })
  messages: MessagesMessageSchema[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1 })
  max_tokens?: number;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { $ref: getSchemaPath(MessagesTextBlock) } }],
    description: 'The standing prompt.',
  })
  system?: unknown;

  @ApiPropertyOptional({ type: MessagesThinkingConfig })
  thinking?: MessagesThinkingConfig;

  @ApiPropertyOptional({ type: [MessagesToolSchema] })
  tools?: MessagesToolSchema[];

  @ApiPropertyOptional({ type: MessagesToolChoice })
  tool_choice?: MessagesToolChoice;

  @ApiPropertyOptional({ type: [String], description: 'Custom strings that stop generation.' })
  stop_sequences?: string[];

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: '0 is ignored.' })
  top_p?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: '0 is ignored.' })
  top_k?: number;

  @ApiPropertyOptional({ default: false })
  stream?: boolean;

  @ApiPropertyOptional({ type: MessagesMetadata })
  metadata?: MessagesMetadata;

  @ApiPropertyOptional({ type: [String], description: 'Beta feature flags; accepted.' })
  betas?: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`{edits: [{type, keep}]}`; accepted.' })
  context_management?: Record<string, unknown>;

  @ApiPropertyOptional({ type: MessagesOutputConfig })
  output_config?: MessagesOutputConfig;

  @ApiPropertyOptional({ type: MessagesOutputFormat, description: 'The older beta spelling of `output_config.format`; send one of the two.', deprecated: true })
  output_format?: MessagesOutputFormat;
}

class MessagesUsage {
  @ApiProperty({
    type: 'integer',
    description: 'Input tokens not read from or written to the prompt cache (as Anthropic counts them). In a stream, `message_start` carries the real count.',
  })
  input_tokens: number;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiProperty({ type: 'integer', description: "Input tokens read from the provider's prompt cache (Anthropic upstreams report them; 0 otherwise)." })
  cache_read_input_tokens: number;

  @ApiProperty({ type: 'integer', description: "Input tokens written to the provider's prompt cache (Anthropic upstreams report them; 0 otherwise)." })
  cache_creation_input_tokens: number;
}

@ApiSchema({ name: 'Message', description: "A message object (the messages format's reply)." })
export class MessageObjectSchema {
  @ApiProperty({ example: 'msg_…' })
  id: string;

  @ApiProperty({ enum: ['message'] })
  type: 'message';

  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty()
  model: string;

  @ApiProperty({
    type: 'array',
    items: { $ref: getSchemaPath(MessagesContentBlockSchema) },
    description: '`thinking` blocks (with a `signature`) first when reasoning is shown, then `text`, then `tool_use` blocks.',
  })
  content: MessagesContentBlockSchema[];

  @ApiProperty({ enum: ['end_turn', 'max_tokens', 'tool_use', 'stop_sequence', 'refusal'] })
  stop_reason: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'The stop sequence hit, if any.' })
  stop_sequence: string | null;

  @ApiProperty({ type: MessagesUsage })
  usage: MessagesUsage;
}
