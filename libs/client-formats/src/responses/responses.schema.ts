/**
 * OpenAI Responses (`POST /v1/responses`): the request the gateway accepts and the response object
 * it returns. The request schema is what `parse-responses.ts` validates with and what
 * `/v1/openapi.json` publishes; the field order is the order problems are reported in.
 */
import { type Static, Type } from 'typebox';
import { Effort, FunctionDefinition, jsonSchemaFields, Model, WebSearch } from '../common/common.schema';
import { Branch, FreeObject, Id, Literals, Maybe, MESSAGE, Nullable, Tagged, When } from '../common/schema';

const ContentPart = Tagged('type', [
  Branch('type', ['input_text', 'output_text'], { text: Type.String() }),
  Branch('type', ['refusal'], { refusal: Type.String() }),
  Branch(
    'type',
    ['input_image'],
    { image_url: Id({ description: 'An `https:` or `data:` URL.' }) },
    // `file_id` points at OpenAI's file store, which the router cannot read.
    { [MESSAGE]: { required: 'is required (file_id images are not supported)' } },
  ),
]);
export type ResponsesContentPart = Static<typeof ContentPart>;

const Content = Type.Unsafe<string | ResponsesContentPart[]>({ type: ['string', 'array'], items: ContentPart });

const MessageItem = Type.Object({
  type: Type.Optional(Type.Unsafe<'message' | null>({ enum: ['message', null], description: 'May be left out.' })),
  role: Literals(['user', 'assistant', 'system', 'developer']),
  content: Type.Unsafe<string | ResponsesContentPart[]>({
    ...Content,
    description:
      'A string, or parts of type `input_text`, `output_text`, `refusal` or `input_image` (`image_url`). System and developer messages take text only.',
  }),
});
const FunctionCallItem = Type.Object({
  type: Literals(['function_call']),
  call_id: Id(),
  name: Id(),
  arguments: Type.String({ description: 'A JSON string.' }),
});
const FunctionOutputItem = Type.Object({
  type: Literals(['function_call_output']),
  call_id: Id(),
  output: Type.Unsafe<string | ResponsesContentPart[]>({ ...Content, description: 'A string, or parts (images returned by the tool included).' }),
});
const TextList = Maybe(Type.Array(Type.Object({ text: Type.String() })));
const ReasoningItem = Type.Object(
  {
    type: Literals(['reasoning']),
    summary: TextList,
    content: TextList,
    encrypted_content: Maybe(Type.String({ description: 'The reasoning as this gateway sealed it for the same account; it restores the whole reasoning.' })),
  },
  { description: 'Reasoning replayed from an earlier response.' },
);

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'];
const when = (type: string, then: object) => When('type', type, then);

export type ResponsesInputItem =
  Static<typeof MessageItem> | Static<typeof FunctionCallItem> | Static<typeof FunctionOutputItem> | Static<typeof ReasoningItem>;

/** An input item, told apart by `type` (`message` when left out). */
const InputItem = Type.Unsafe<ResponsesInputItem>({
  type: 'object',
  description:
    'A message (`type` may be left out), a `function_call`, a `function_call_output` or a `reasoning` item. `item_reference` items (`{type, id}`) name an item of a stored response of the caller and are replaced by it.',
  properties: {
    type: {
      enum: [...ITEM_TYPES, null],
      [MESSAGE]: `unsupported input item type {json}; expected ${ITEM_TYPES.map((type) => `'${type}'`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1')}`,
    },
  },
  allOf: [
    when('function_call', FunctionCallItem),
    when('function_call_output', FunctionOutputItem),
    when('reasoning', ReasoningItem),
    { if: { properties: { type: { enum: ['message', null] } } }, then: MessageItem },
  ],
});

/** Function tools flat (`{type, name, …}`) or nested under `function`; other (hosted) tools are skipped. */
const Tool = Type.Unsafe<{ type: string; function?: FunctionDefinition } & Partial<FunctionDefinition>>({
  type: 'object',
  required: ['type'],
  properties: { type: Id() },
  description: 'A function tool, flat (`{type, name, …}`) or nested under `function`. Hosted tools are skipped.',
  ...when('function', {
    if: { properties: { function: { type: 'object' } }, required: ['function'] },
    then: { properties: { function: FunctionDefinition } },
    else: FunctionDefinition,
  }),
});

const ToolChoice = Type.Unsafe<'auto' | 'none' | 'required' | { type: 'function'; name?: string; function?: { name: string } }>({
  type: ['string', 'object'],
  description: '`auto`, `none`, `required`, or `{type: function, name}`.',
  if: { type: 'string' },
  then: { enum: ['auto', 'none', 'required'] },
  else: {
    type: 'object',
    required: ['type'],
    properties: { type: Literals(['function']) },
    if: { properties: { function: { type: 'object' } }, required: ['function'] },
    then: { properties: { function: Type.Object({ name: Id() }) } },
    else: Type.Object({ name: Id() }),
  },
});

const TextFormat = Tagged('type', [Branch('type', ['text'], {}), Branch('type', ['json_object'], {}), Branch('type', ['json_schema'], jsonSchemaFields(true))]);

export const ResponsesRequest = Type.Object({
  model: Model,
  instructions: Maybe(Type.String({ description: 'System instructions.' })),
  input: Type.Unsafe<string | ResponsesInputItem[]>({
    type: ['string', 'array'],
    items: InputItem,
    minItems: 1,
    description: 'A string (one user message), or items.',
  }),
  web_search: WebSearch,
  max_output_tokens: Maybe(Type.Integer({ minimum: 1 })),
  temperature: Maybe(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Maybe(Type.Number({ minimum: 0, maximum: 1 })),
  tools: Maybe(Type.Array(Tool)),
  tool_choice: Maybe(ToolChoice),
  reasoning: Maybe(
    Type.Object({
      effort: Maybe(Effort),
      summary: Maybe(
        // Only steers the upstream: a kind of summary the gateway does not know is accepted.
        Type.Unsafe<boolean | 'auto' | 'concise' | 'detailed' | (string & {})>({
          type: ['boolean', 'string'],
          examples: ['auto', 'concise', 'detailed'],
          description: '`auto`, `concise` or `detailed` (a kind the gateway does not know is accepted too). `false`: reason, but do not return the reasoning.',
        }),
      ),
    }),
  ),
  stream: Maybe(Type.Boolean({ default: false })),
  include: Maybe(
    Type.Array(Type.String(), {
      description: '`message.output_text.logprobs` asks for log probabilities, `reasoning.encrypted_content` for the reasoning sealed into reasoning items.',
    }),
  ),
  top_logprobs: Maybe(Type.Integer({ minimum: 0, maximum: 20 })),
  user: Maybe(Type.String()),
  safety_identifier: Maybe(Type.String({ description: 'Taken as `user` when `user` is left out.' })),
  text: Maybe(
    Type.Object({
      format: Maybe(
        Type.Unsafe<Static<typeof TextFormat>>({
          ...TextFormat,
          description:
            'Structured output: `json_object`, or `json_schema` with `name` and `schema` beside `type`. A format the model cannot honour is a 400 naming this field.',
        }),
      ),
    }),
  ),
  metadata: Maybe(Type.Record(Type.String(), Type.String(), { description: 'Echoed back on the response.' })),
  store: Maybe(
    Type.Boolean({
      default: true,
      description: 'Store the reply for `GET /v1/responses/{id}`, `previous_response_id` and `item_reference`; `false` stores nothing.',
    }),
  ),
  previous_response_id: Maybe(
    Type.String({
      description:
        "A stored response of the caller: its input and output items come before this request's `input` (its `instructions` do not carry over). Unknown, expired or another key's: 404.",
    }),
  ),
  conversation: Maybe(
    Type.Union([Type.String(), Type.Object({ id: Type.String() })], {
      description:
        "A conversation of the caller (`conv_…`, or `{id}`): its items come before this request's `input`, and once the response completes the request's input items and the response's output items are appended to it. Not with `previous_response_id` (400). Unknown or another key's: 404.",
    }),
  ),
});
export type ResponsesRequest = Static<typeof ResponsesRequest>;

const Status = Literals(['in_progress', 'completed']);
const Count = Type.Integer();

export const ResponsesOutputMessage = Type.Object({
  id: Type.String(),
  type: Literals(['message']),
  status: Status,
  role: Literals(['assistant']),
  content: Type.Array(
    Type.Object({
      type: Literals(['output_text']),
      text: Type.String(),
      annotations: Type.Array(Type.Unknown()),
      logprobs: Type.Optional(Type.Array(FreeObject(), { description: 'When `include` asked for them.' })),
    }),
  ),
});
export const ResponsesReasoningItem = Type.Object({
  id: Type.String(),
  type: Literals(['reasoning']),
  summary: Type.Array(Type.Object({ type: Literals(['summary_text']), text: Type.String() })),
  encrypted_content: Type.Optional(Type.String({ description: 'When `include` asked for `reasoning.encrypted_content`: opaque, bound to the account.' })),
});
export const ResponsesFunctionCall = Type.Object({
  id: Type.String(),
  type: Literals(['function_call']),
  status: Status,
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String({ description: 'A JSON string.' }),
});

export const ResponseObject = Type.Object(
  {
    id: Type.String({ example: 'resp_…' }),
    object: Literals(['response']),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    status: Literals(['in_progress', 'completed', 'incomplete'], { description: '`incomplete` when the output limit cut the reply.' }),
    model: Type.String(),
    output: Type.Array(Type.Union([ResponsesOutputMessage, ResponsesReasoningItem, ResponsesFunctionCall])),
    usage: Nullable(
      Type.Object(
        {
          input_tokens: Count,
          input_tokens_details: Type.Object({ cached_tokens: Count }),
          output_tokens: Count,
          output_tokens_details: Type.Object({ reasoning_tokens: Count }),
          total_tokens: Count,
        },
        { description: '`null` while in progress.' },
      ),
    ),
    error: Type.Null({ description: 'Failures are HTTP errors, never a response object.' }),
    incomplete_details: Nullable(FreeObject({ description: '`{reason}` when `status` is `incomplete`.' })),
    instructions: Nullable(Type.String()),
    max_output_tokens: Nullable(Type.Integer()),
    parallel_tool_calls: Type.Boolean(),
    previous_response_id: Nullable(Type.String({ description: 'As requested.' })),
    conversation: Type.Optional(Type.Object({ id: Type.String() }, { description: 'The conversation the turn was appended to, when the request named one.' })),
    reasoning: FreeObject({ description: '`{effort, summary}` as requested.' }),
    store: Type.Boolean({ description: "Whether the reply was stored (the request's `store`, default true)." }),
    temperature: Type.Number(),
    text: FreeObject({ description: "`{format}`: the request's `text.format`, `{type: text}` by default." }),
    tool_choice: Type.Union([Type.String(), FreeObject()]),
    tools: Type.Array(FreeObject(), { description: 'The function tools offered, flat.' }),
    top_p: Type.Number(),
    truncation: Literals(['disabled']),
    user: Nullable(Type.String()),
    metadata: FreeObject({ description: "The request's `metadata`, echoed." }),
  },
  { description: "A response object; the request's settings are echoed back as OpenAI does." },
);
export type ResponseObject = Static<typeof ResponseObject>;

export const ConversationObject = Type.Object(
  {
    id: Type.String({ example: 'conv_…' }),
    object: Literals(['conversation']),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    metadata: Type.Record(Type.String(), Type.String()),
  },
  { description: 'A conversation: items kept across responses.' },
);
export const DeletedConversation = Type.Object({
  id: Type.String({ example: 'conv_…' }),
  object: Literals(['conversation.deleted']),
  deleted: Type.Literal(true),
});
export const ConversationItemList = Type.Object(
  {
    object: Literals(['list']),
    data: Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }), {
      description: 'Items as stored, with their ids: messages, function calls and their outputs, reasoning.',
    }),
    first_id: Nullable(Type.String()),
    last_id: Nullable(Type.String()),
    has_more: Type.Boolean(),
  },
  { description: "A page of a conversation's items, OpenAI's list shape." },
);
export const ConversationCreateRequest = Type.Object({
  items: Maybe(Type.Array(FreeObject(), { maxItems: 20, description: 'Initial items (Responses-API input items); an item without an id gets one.' })),
  metadata: Maybe(Type.Record(Type.String(), Type.String(), { description: 'Up to 16 pairs; keys up to 64 characters, values up to 512.' })),
});
export const ConversationUpdateRequest = Type.Object({
  metadata: Type.Record(Type.String(), Type.String(), { description: 'Replaces the metadata: up to 16 pairs.' }),
});
export const ConversationItemsCreateRequest = Type.Object({
  items: Type.Array(FreeObject(), { minItems: 1, maxItems: 20, description: 'Items to add at the end; an item without an id gets one.' }),
});

export const DeletedResponse = Type.Object({ id: Type.String({ example: 'resp_…' }), object: Literals(['response']), deleted: Type.Literal(true) });

export const ResponseInputItemList = Type.Object(
  {
    object: Literals(['list']),
    data: Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }), {
      description: 'Items with their ids: messages (content as parts), function calls and their outputs, reasoning.',
    }),
    first_id: Nullable(Type.String()),
    last_id: Nullable(Type.String()),
    has_more: Type.Boolean(),
  },
  { description: "A page of a stored response's input items, OpenAI's list shape." },
);
