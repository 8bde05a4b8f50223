import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { EFFORT_LEVELS, JSON_SCHEMA_OBJECT, MODEL_DESCRIPTION, STRING_OR_STRINGS } from './common.openapi';

// OpenAI Chat Completions, as the router parses it (apps/inference-router/src/client-formats/parse-chat.ts)
// and renders it (render-response.ts).

class ChatFunctionCall {
  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'The arguments as a JSON string.' })
  arguments: string;
}

@ApiSchema({ name: 'ChatToolCall' })
export class ChatToolCallSchema {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['function'] })
  type: 'function';

  @ApiProperty({ type: ChatFunctionCall })
  function: ChatFunctionCall;
}

class ChatImageUrl {
  @ApiProperty({ description: 'An `https:` or `data:` URL.' })
  url: string;
}

@ApiSchema({ name: 'ChatContentPart' })
export class ChatContentPartSchema {
  @ApiProperty({ enum: ['text', 'image_url', 'refusal'], description: '`image_url` in user messages only; `refusal` in assistant history.' })
  type: string;

  @ApiPropertyOptional()
  text?: string;

  @ApiPropertyOptional({ type: ChatImageUrl })
  image_url?: ChatImageUrl;

  @ApiPropertyOptional()
  refusal?: string;
}

@ApiSchema({ name: 'ChatMessage' })
@ApiExtraModels(ChatContentPartSchema)
export class ChatMessageSchema {
  @ApiProperty({
    enum: ['system', 'developer', 'user', 'assistant', 'tool'],
    description: 'Leading `system`/`developer` messages become the system prompt; later ones stay mid-conversation instructions.',
  })
  role: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'array', items: { $ref: getSchemaPath(ChatContentPartSchema) } }, { type: 'null' }],
    description: 'Required except on an assistant turn that only calls tools.',
  })
  content?: unknown;

  @ApiPropertyOptional()
  name?: string;

  @ApiPropertyOptional({ type: [ChatToolCallSchema], description: 'Assistant turns.' })
  tool_calls?: ChatToolCallSchema[];

  @ApiPropertyOptional({ description: '`tool` turns: the call answered.' })
  tool_call_id?: string;

  @ApiPropertyOptional({ description: 'Assistant turns: earlier reasoning.' })
  reasoning?: string;

  @ApiPropertyOptional({ description: 'Assistant turns: earlier reasoning (DeepSeek spelling).' })
  reasoning_content?: string;
}

class ChatFunctionDefinition {
  @ApiProperty()
  name: string;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional(JSON_SCHEMA_OBJECT)
  parameters?: Record<string, unknown>;
}

@ApiSchema({ name: 'ChatTool' })
export class ChatToolSchema {
  @ApiProperty({ enum: ['function'] })
  type: 'function';

  @ApiProperty({ type: ChatFunctionDefinition })
  function: ChatFunctionDefinition;
}

class ChatThinking {
  @ApiProperty({ enum: ['enabled', 'adaptive', 'disabled'] })
  type: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1 })
  budget_tokens?: number;
}

class ChatReasoning {
  @ApiPropertyOptional({ description: 'Hide reasoning output (it is still billed).' })
  exclude?: boolean;

  @ApiPropertyOptional({ enum: EFFORT_LEVELS })
  effort?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Reasoning budget; turns reasoning on.' })
  max_tokens?: number;

  @ApiPropertyOptional()
  enabled?: boolean;
}

class ChatJsonSchemaFormat {
  @ApiProperty({ pattern: '^[A-Za-z0-9_-]{1,64}$' })
  name: string;

  @ApiProperty({ ...JSON_SCHEMA_OBJECT, description: 'The JSON Schema the answer must match (an object; at most 64 levels deep and 100,000 characters).' })
  schema: Record<string, unknown>;

  @ApiPropertyOptional()
  strict?: boolean;

  @ApiPropertyOptional()
  description?: string;
}

class ChatResponseFormat {
  @ApiProperty({ enum: ['text', 'json_object', 'json_schema'] })
  type: string;

  @ApiPropertyOptional({ type: ChatJsonSchemaFormat, description: 'With `type: json_schema`.' })
  json_schema?: ChatJsonSchemaFormat;
}

class ChatStreamOptions {
  @ApiPropertyOptional({ description: 'Send a last chunk with `usage` and empty `choices`.' })
  include_usage?: boolean;
}

@ApiSchema({ name: 'ChatCompletionRequest' })
export class ChatCompletionRequestSchema {
  @ApiProperty({ description: MODEL_DESCRIPTION, example: 'sim-chat' })
  model: string;

  @ApiProperty({ type: [ChatMessageSchema], minItems: 1 })
  messages: ChatMessageSchema[];

  @ApiPropertyOptional({ default: false })
  stream?: boolean;

  @ApiPropertyOptional({ type: ChatStreamOptions })
  stream_options?: ChatStreamOptions;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Reasoning tokens are billed as output and count against it.' })
  max_tokens?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Wins over `max_tokens`.' })
  max_completion_tokens?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 2, example: 1 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  top_p?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: '0: no limit.' })
  top_k?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  frequency_penalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  presence_penalty?: number;

  @ApiPropertyOptional({ ...STRING_OR_STRINGS(4), description: 'Stop strings.' })
  stop?: string | string[];

  @ApiPropertyOptional({ type: [ChatToolSchema] })
  tools?: ChatToolSchema[];

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['auto', 'none', 'required'] },
      {
        type: 'object',
        required: ['type', 'function'],
        properties: {
          type: { type: 'string', enum: ['function'] },
          function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
      },
    ],
  })
  tool_choice?: unknown;

  @ApiPropertyOptional({ description: 'Accepted for compatibility; no web search is run.' })
  web_search?: boolean;

  @ApiPropertyOptional({
    type: ChatResponseFormat,
    description:
      'Structured output: the answer (`message.content`) is JSON (`json_object`), valid against the schema too (`json_schema`). A format the model cannot honour is a 400 naming this field.',
  })
  response_format?: ChatResponseFormat;

  @ApiPropertyOptional({ type: ChatThinking })
  thinking?: ChatThinking;

  @ApiPropertyOptional({ type: ChatReasoning })
  reasoning?: ChatReasoning;

  @ApiPropertyOptional({ enum: EFFORT_LEVELS })
  reasoning_effort?: string;

  @ApiPropertyOptional({ description: 'Also return reasoning as `message.reasoning_content`.' })
  reasoning_content_compat?: boolean;

  @ApiPropertyOptional()
  logprobs?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 20 })
  top_logprobs?: number;

  @ApiPropertyOptional()
  user?: string;
}

class ChatCompletionMessage {
  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: 'string', nullable: true, description: '`null` on a turn that only calls tools.' })
  content: string | null;

  @ApiProperty({ type: 'null' })
  refusal: null;

  @ApiPropertyOptional({ description: 'Reasoning, unless excluded.' })
  reasoning?: string;

  @ApiPropertyOptional({ description: 'Reasoning again, with `reasoning_content_compat: true`.' })
  reasoning_content?: string;

  @ApiPropertyOptional({ type: [ChatToolCallSchema] })
  tool_calls?: ChatToolCallSchema[];
}

class ChatChoice {
  @ApiProperty({ type: 'integer' })
  index: number;

  @ApiProperty({ type: ChatCompletionMessage })
  message: ChatCompletionMessage;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: 'Token log probabilities when `logprobs` was asked for.' })
  logprobs: Record<string, unknown> | null;

  @ApiProperty({ enum: ['stop', 'length', 'tool_calls', 'content_filter'] })
  finish_reason: string;
}

class CachedTokens {
  @ApiProperty({ type: 'integer' })
  cached_tokens: number;
}

class ReasoningTokens {
  @ApiProperty({ type: 'integer' })
  reasoning_tokens: number;
}

class ChatUsage {
  @ApiProperty({ type: 'integer' })
  prompt_tokens: number;

  @ApiProperty({ type: 'integer', description: 'Reasoning tokens included.' })
  completion_tokens: number;

  @ApiProperty({ type: 'integer' })
  total_tokens: number;

  @ApiProperty({ type: CachedTokens })
  prompt_tokens_details: CachedTokens;

  @ApiProperty({ type: ReasoningTokens })
  completion_tokens_details: ReasoningTokens;
}

@ApiSchema({ name: 'ChatCompletion' })
export class ChatCompletionSchema {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty({ type: 'integer', description: 'Unix seconds.' })
  created: number;

  @ApiProperty()
  model: string;

  @ApiProperty({ type: [ChatChoice] })
  choices: ChatChoice[];

  @ApiProperty({ type: ChatUsage })
  usage: ChatUsage;
}
