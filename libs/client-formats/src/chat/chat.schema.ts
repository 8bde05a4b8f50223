/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`): the request the gateway accepts and the
 * completion it returns. The request schema is what `parse-chat.ts` validates with and what
 * `/v1/openapi.json` publishes; the field order is the order problems are reported in.
 */
import { type Static, Type } from 'typebox';
import { Effort, FunctionDefinition, jsonSchemaFields, Model, WebSearch } from '../common/common.schema';
import { Branch, FreeObject, Id, Literals, Maybe, Nullable, StringOrStrings, Tagged, When } from '../common/schema';

const Text = Type.String();

/** A string, or an array of `items`. */
const StringOr = <T extends ReturnType<typeof Tagged>>(items: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<string | Static<T>[]>({ type: ['string', 'array'], items, ...options });

const TextPart = Branch('type', ['text'], { text: Text });
/** System, developer and tool content: a string, or text parts read as one text. */
const TextContent = StringOr(Tagged('type', [TextPart]));

const UserPart = Tagged('type', [
  TextPart,
  Branch('type', ['image_url'], { image_url: Type.Object({ url: Id({ description: 'An `https:` or `data:` URL.' }) }) }),
]);
const AssistantPart = Tagged('type', [
  TextPart,
  Branch('type', ['refusal'], { refusal: Text }, { description: 'A refusal in history is what the assistant said.' }),
]);

export const ChatToolCall = Type.Object({
  id: Id(),
  type: Literals(['function']),
  function: Type.Object({ name: Id(), arguments: Type.String({ description: 'The arguments as a JSON string.' }) }),
});

/** A tool call in assistant history: `type` may be left out. */
const HistoryToolCall = Type.Object({
  type: Type.Optional(Literals(['function'])),
  function: Type.Object({ name: Id(), arguments: Type.String({ description: 'The arguments as a JSON string.' }) }),
  id: Id(),
});

const name = Maybe(Type.String());

export const ChatMessage = Tagged(
  'role',
  [
    Branch('role', ['system', 'developer'], { name, content: TextContent }),
    Branch('role', ['user'], { name, content: StringOr(UserPart) }),
    Branch('role', ['assistant'], {
      name,
      reasoning_content: Maybe(Type.String({ description: 'Earlier reasoning (DeepSeek spelling).' })),
      reasoning: Maybe(Type.String({ description: 'Earlier reasoning.' })),
      content: Maybe(StringOr(AssistantPart, { description: 'Left out (or null) on a turn that only calls tools.' })),
      tool_calls: Maybe(Type.Array(HistoryToolCall)),
    }),
    Branch('role', ['tool'], { name, tool_call_id: Type.String({ description: 'The call answered.' }), content: TextContent }),
  ],
  { description: 'Leading `system`/`developer` messages become the system prompt; later ones stay mid-conversation instructions.' },
);
export type ChatMessage = Static<typeof ChatMessage>;

const ToolChoice = Type.Unsafe<'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } }>({
  type: ['string', 'object'],
  if: { type: 'string' },
  then: { enum: ['auto', 'none', 'required'] },
  else: Tagged('type', [Branch('type', ['function'], { function: Type.Object({ name: Id() }) })]),
});

/**
 * A function tool. A tool of another type (OpenAI's `custom`, a host's built-in search) is skipped,
 * not refused, as responses skip hosted tools: the type only steers an upstream the gateway does
 * not forward it to.
 */
const Tool = Type.Unsafe<{ type: string; function?: FunctionDefinition }>({
  type: 'object',
  required: ['type'],
  properties: { type: Id() },
  description: '`{type: function, function: {name, description?, parameters?}}`. Tools of another type are skipped.',
  ...When('type', 'function', Type.Object({ function: FunctionDefinition })),
});

const ResponseFormat = Tagged('type', [
  Branch('type', ['text'], {}),
  Branch('type', ['json_object'], {}),
  Branch('type', ['json_schema'], { json_schema: Type.Object(jsonSchemaFields(true)) }),
]);

const PositiveInteger = (description?: string) => Type.Integer({ minimum: 1, ...(description ? { description } : {}) });

export const ChatCompletionRequest = Type.Object({
  model: Model,
  messages: Type.Array(ChatMessage, { minItems: 1 }),
  stream: Maybe(Type.Boolean({ default: false })),
  stream_options: Maybe(Type.Object({ include_usage: Maybe(Type.Boolean({ description: 'Send a last chunk with `usage` and empty `choices`.' })) })),
  usage: Maybe(
    Type.Object(
      { include: Maybe(Type.Boolean({ description: 'As `stream_options.include_usage`.' })) },
      { description: "OpenRouter's spelling of `stream_options.include_usage` (its AI SDK provider asks for stream usage this way)." },
    ),
  ),
  web_search: WebSearch,
  max_completion_tokens: Maybe(PositiveInteger('Wins over `max_tokens`.')),
  max_tokens: Maybe(PositiveInteger('Reasoning tokens are billed as output and count against it.')),
  temperature: Maybe(Type.Number({ minimum: 0, maximum: 2, example: 1 })),
  top_p: Maybe(Type.Number({ minimum: 0, maximum: 1 })),
  top_k: Maybe(Type.Integer({ minimum: 0, description: '0: no limit.' })),
  frequency_penalty: Maybe(Type.Number({ minimum: -2, maximum: 2 })),
  presence_penalty: Maybe(Type.Number({ minimum: -2, maximum: 2 })),
  stop: Maybe(StringOrStrings({ maxItems: 4, description: 'Stop strings.' })),
  tools: Maybe(Type.Array(Tool)),
  tool_choice: Maybe(ToolChoice),
  reasoning_effort: Maybe(Effort),
  thinking: Maybe(Type.Object({ type: Literals(['enabled', 'adaptive', 'disabled']), budget_tokens: Maybe(PositiveInteger()) })),
  reasoning: Maybe(
    Type.Object({
      exclude: Maybe(Type.Boolean({ description: 'Hide reasoning output (it is still billed).' })),
      max_tokens: Maybe(PositiveInteger('Reasoning budget; turns reasoning on.')),
      effort: Maybe(Effort),
      enabled: Maybe(Type.Boolean()),
    }),
  ),
  logprobs: Maybe(Type.Boolean()),
  top_logprobs: Maybe(Type.Integer({ minimum: 0, maximum: 20 })),
  user: Maybe(Type.String()),
  response_format: Maybe(
    Type.Unsafe<Static<typeof ResponseFormat>>({
      ...ResponseFormat,
      description:
        'Structured output: the answer (`message.content`) is JSON (`json_object`), valid against the schema too (`json_schema`). A format the model cannot honour is a 400 naming this field.',
    }),
  ),
  reasoning_content_compat: Maybe(Type.Boolean({ description: 'Also return reasoning as `message.reasoning_content`.' })),
});
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;

const Count = Type.Integer();

export const ChatCompletion = Type.Object({
  id: Type.String(),
  object: Literals(['chat.completion']),
  created: Type.Integer({ description: 'Unix seconds.' }),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Count,
      message: Type.Object({
        role: Literals(['assistant']),
        content: Nullable(Type.String({ description: '`null` on a turn that only calls tools.' })),
        refusal: Type.Null(),
        reasoning: Type.Optional(Type.String({ description: 'Reasoning, unless excluded.' })),
        reasoning_content: Type.Optional(Type.String({ description: 'Reasoning again, with `reasoning_content_compat: true`.' })),
        tool_calls: Type.Optional(Type.Array(ChatToolCall)),
      }),
      logprobs: Nullable(FreeObject({ description: 'Token log probabilities when `logprobs` was asked for.' })),
      finish_reason: Literals(['stop', 'length', 'tool_calls', 'content_filter']),
    }),
  ),
  usage: Type.Object({
    prompt_tokens: Count,
    completion_tokens: Type.Integer({ description: 'Reasoning tokens included.' }),
    total_tokens: Count,
    prompt_tokens_details: Type.Object({ cached_tokens: Count }),
    completion_tokens_details: Type.Object({ reasoning_tokens: Count }),
  }),
});
export type ChatCompletion = Static<typeof ChatCompletion>;
