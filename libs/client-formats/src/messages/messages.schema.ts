/**
 * Anthropic Messages (`POST /v1/messages`): the request the gateway accepts and the message it
 * returns. The request schema is what `parse-messages.ts` validates with and what
 * `/v1/openapi.json` publishes; the field order is the order problems are reported in.
 */
import { type Static, Type } from 'typebox';
import { Effort, jsonSchemaFields, Model } from '../common/common.schema';
import { Branch, FreeObject, Id, Literals, Maybe, MESSAGE, Nullable, OpenLiterals, Tagged, When } from '../common/schema';

export const TextBlock = Branch('type', ['text'], { text: Type.String() });
const TextBlocks = Type.Unsafe<string | Static<typeof TextBlock>[]>({ type: ['string', 'array'], items: Tagged('type', [TextBlock]) });

const ImageBlock = Branch('type', ['image'], {
  source: Tagged('type', [Branch('type', ['base64'], { media_type: Id(), data: Id() }), Branch('type', ['url'], { url: Id() })]),
});
export type ImageBlock = Static<typeof ImageBlock>;

/** Documents the router can pass on are those that are text: plain-text or content-block sources. */
const DocumentBlock = Branch('type', ['document'], {
  source: Type.Unsafe<{ type: 'text'; data: string } | { type: 'content'; content: string | Static<typeof TextBlock>[] }>({
    type: 'object',
    required: ['type'],
    description: '`{type: text, data}` or `{type: content, content}`.',
    properties: {
      type: {
        type: 'string',
        enum: ['text', 'content'],
        [MESSAGE]: { enum: "unsupported document source '{value}'; only 'text' and 'content' documents are supported" },
      },
    },
    allOf: [When('type', 'text', Type.Object({ data: Type.String() })), When('type', 'content', Type.Object({ content: TextBlocks }))],
  }),
});
export type DocumentBlock = Static<typeof DocumentBlock>;

const ToolResultBlock = Type.Object({
  type: Literals(['tool_result']),
  tool_use_id: Id(),
  is_error: Maybe(Type.Boolean()),
  content: Maybe(
    Type.Unsafe<string | (Static<typeof TextBlock> | ImageBlock | DocumentBlock)[]>({
      type: ['string', 'array'],
      items: Tagged('type', [TextBlock, ImageBlock, DocumentBlock]),
    }),
  ),
});
const MidConversationSystemBlock = Type.Object({ type: Literals(['mid_conv_system']), content: TextBlocks });
const ToolListEdit = Type.Object(
  { type: Literals(['tool_addition', 'tool_removal']) },
  { description: 'Accepted and ignored: tool-list edits the router cannot forward.' },
);

const USER_BLOCKS = ['text', 'image', 'document', 'tool_result', 'mid_conv_system', 'tool_addition', 'tool_removal'];
export type UserBlock =
  | Static<typeof TextBlock>
  | ImageBlock
  | DocumentBlock
  | Static<typeof ToolResultBlock>
  | Static<typeof MidConversationSystemBlock>
  | Static<typeof ToolListEdit>;

/** A block of a user (or mid-conversation system) turn. */
const UserContentBlock = Type.Unsafe<UserBlock>({
  type: 'object',
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      enum: USER_BLOCKS,
      [MESSAGE]: { enum: "unsupported content block type '{value}'; expected 'text', 'image', 'document', 'tool_result' or 'mid_conv_system'" },
    },
  },
  allOf: [
    When('type', 'text', TextBlock),
    When('type', 'image', ImageBlock),
    When('type', 'document', DocumentBlock),
    When('type', 'tool_result', ToolResultBlock),
    When('type', 'mid_conv_system', MidConversationSystemBlock),
  ],
});

const ThinkingBlock = Type.Object({ type: Literals(['thinking']), signature: Maybe(Type.String()), thinking: Type.String() });
const RedactedThinkingBlock = Type.Object(
  { type: Literals(['redacted_thinking']), data: Type.String() },
  { description: 'Opaque, encrypted reasoning only Anthropic can read; it is dropped.' },
);
const ToolUseBlock = Type.Object({ type: Literals(['tool_use']), id: Id(), name: Id(), input: Maybe(FreeObject()) });
/** The blocks an assistant turn is read for (server-tool blocks pass the schema too, and are skipped). */
export type AssistantBlock = Static<typeof TextBlock> | Static<typeof ThinkingBlock> | Static<typeof RedactedThinkingBlock> | Static<typeof ToolUseBlock>;

/**
 * A block of an assistant turn. Server-tool blocks (`server_tool_use`, `web_search_tool_result`, ...)
 * record work done on Anthropic's side and are skipped.
 */
const AssistantContentBlock = Type.Unsafe<AssistantBlock>({
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' } },
  allOf: [
    When('type', 'text', TextBlock),
    When('type', 'thinking', ThinkingBlock),
    When('type', 'redacted_thinking', RedactedThinkingBlock),
    When('type', 'tool_use', ToolUseBlock),
    {
      if: { properties: { type: { anyOf: [{ const: 'server_tool_use' }, { pattern: '_tool_result$' }] } } },
      else: {
        properties: {
          type: {
            enum: ['text', 'thinking', 'redacted_thinking', 'tool_use'],
            [MESSAGE]: "unsupported assistant content block type '{value}'; expected 'text', 'thinking', 'redacted_thinking' or 'tool_use'",
          },
        },
      },
    },
  ],
});

export const MessagesMessage = Tagged('role', [
  Branch('role', ['user', 'system'], {
    content: Type.Unsafe<string | UserBlock[]>({
      type: ['string', 'array'],
      items: UserContentBlock,
      description: 'A string, or blocks: `text`, `image`, `document`, `tool_result`, `mid_conv_system`. A `system` turn may not come first.',
    }),
  }),
  Branch('role', ['assistant'], {
    content: Type.Unsafe<string | AssistantBlock[]>({
      type: ['string', 'array'],
      items: AssistantContentBlock,
      description: 'A string, or blocks: `text`, `thinking`, `redacted_thinking`, `tool_use`.',
    }),
  }),
]);
export type MessagesMessage = Static<typeof MessagesMessage>;

/** A custom tool. Server tools (a versioned `type`, no `input_schema`) are skipped. */
const Tool = Type.Unsafe<{ type?: string | null; name: string; input_schema: Record<string, unknown>; description?: string | null }>({
  type: 'object',
  description: 'A custom tool. Server tools (a versioned `type`, no `input_schema`) are skipped.',
  properties: { type: { type: ['string', 'null'] } },
  if: { properties: { type: { type: 'string', not: { const: 'custom' } } }, required: ['type'], not: { required: ['input_schema'] } },
  else: Type.Object({ name: Id(), input_schema: FreeObject({ description: 'A JSON Schema object.' }), description: Maybe(Type.String()) }),
});

/**
 * How thinking comes back. It only steers the upstream, so any mode is accepted and sent to
 * Anthropic upstreams as it came; the gateway applies the modes it knows for other upstreams.
 */
const ThinkingDisplay = OpenLiterals(['summarized', 'omitted', 'updates'], {
  description:
    '`summarized` (shown), `omitted` (think, but return no thinking), `updates` (only the progress notes written between tool calls; other upstreams write none, so nothing is shown). Sent to Anthropic upstreams as it came, any other mode included.',
});

const JsonSchemaFormat = Tagged('type', [Branch('type', ['json_schema'], jsonSchemaFields(false))]);

export const MessagesRequest = Type.Object({
  model: Model,
  system: Maybe(Type.Unsafe<string | Static<typeof TextBlock>[]>({ ...TextBlocks, description: 'The standing prompt.' })),
  messages: Type.Array(MessagesMessage, { minItems: 1 }),
  metadata: Maybe(Type.Object({ user_id: Maybe(Type.String()) })),
  betas: Maybe(Type.Array(Type.String(), { description: 'Beta feature flags; accepted.' })),
  context_management: Maybe(FreeObject({ description: '`{edits: [{type, keep}]}`; accepted.' })),
  max_tokens: Maybe(Type.Integer({ minimum: 1 })),
  temperature: Maybe(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Maybe(Type.Number({ minimum: 0, maximum: 1, description: '0 is ignored.' })),
  top_k: Maybe(Type.Integer({ minimum: 0, description: '0 is ignored.' })),
  stop_sequences: Maybe(Type.Array(Type.String(), { description: 'Custom strings that stop generation.' })),
  tools: Maybe(Type.Array(Tool)),
  tool_choice: Maybe(
    Tagged('type', [
      Branch('type', ['auto', 'any', 'none'], { disable_parallel_tool_use: Maybe(Type.Boolean()) }),
      Branch('type', ['tool'], { disable_parallel_tool_use: Maybe(Type.Boolean()), name: Id() }),
    ]),
  ),
  thinking: Maybe(
    Tagged('type', [
      Branch('type', ['enabled'], { budget_tokens: Type.Integer({ minimum: 1 }), display: Maybe(ThinkingDisplay) }),
      Branch('type', ['adaptive'], { budget_tokens: Maybe(Type.Integer({ minimum: 1 })), display: Maybe(ThinkingDisplay) }),
      Branch('type', ['disabled'], {}),
    ]),
  ),
  output_config: Maybe(
    Type.Object({
      effort: Maybe(Type.Unsafe<Static<typeof Effort>>({ ...Effort, description: 'Refines enabled thinking.' })),
      format: Maybe(JsonSchemaFormat),
    }),
  ),
  stream: Maybe(Type.Boolean({ default: false })),
  output_format: Maybe(
    Type.Unsafe<Static<typeof JsonSchemaFormat>>({
      ...JsonSchemaFormat,
      description: 'The older beta spelling of `output_config.format`; send one of the two.',
      deprecated: true,
    }),
  ),
});
export type MessagesRequest = Static<typeof MessagesRequest>;

const Count = Type.Integer();

export const MessageObject = Type.Object(
  {
    id: Type.String({ example: 'msg_…' }),
    type: Literals(['message']),
    role: Literals(['assistant']),
    model: Type.String(),
    content: Type.Array(FreeObject(), {
      description: '`thinking` blocks (with a `signature`) first when reasoning is shown, then `text`, then `tool_use` blocks.',
    }),
    stop_reason: Literals(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence', 'refusal']),
    stop_sequence: Nullable(Type.String({ description: 'The stop sequence hit, if any.' })),
    usage: Type.Object({
      input_tokens: Type.Integer({
        description:
          'Input tokens not read from or written to the prompt cache (as Anthropic counts them). In a stream, `message_start` carries the real count.',
      }),
      output_tokens: Count,
      cache_read_input_tokens: Type.Integer({
        description: "Input tokens read from the provider's prompt cache (Anthropic upstreams report them; 0 otherwise).",
      }),
      cache_creation_input_tokens: Type.Integer({
        description: "Input tokens written to the provider's prompt cache (Anthropic upstreams report them; 0 otherwise).",
      }),
    }),
  },
  { description: "A message object (the messages format's reply)." },
);
export type MessageObject = Static<typeof MessageObject>;
