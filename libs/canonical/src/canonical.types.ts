/**
 * The router's internal, provider-neutral shape of a text-generation call. Every client format
 * (chat completions, responses, messages) is parsed into it, every adapter (openai, anthropic,
 * simulator) speaks it, and every reply is rendered from it into the caller's format.
 */

export type StopReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'stop_sequence';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  /** Either a URL (http(s) or data:) or inline base64 with its media type. */
  url?: string;
  mediaType?: string;
  data?: string;
}

/** Reasoning text an assistant produced; `signature` is the provider's opaque proof (Anthropic). */
export interface ThinkingPart {
  type: 'thinking';
  text: string;
  signature?: string;
}

export type ContentPart = TextPart | ImagePart | ThinkingPart;

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as OpenAI sends it. */
  arguments: string;
}

export type CanonicalMessage =
  /** A system instruction in the middle of the conversation (the leading one goes to `system`). */
  | { role: 'system'; content: string }
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; content: ContentPart[]; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string; isError?: boolean };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON schema of the arguments. */
  parameters: Record<string, unknown>;
  /** OpenAI's `strict` (arguments held to the schema exactly), when the client said; echoed as sent. */
  strict?: boolean;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ReasoningOptions {
  enabled: boolean;
  budgetTokens?: number;
  /** Effort level where the client gives one (`low`, `medium`, `high`). */
  effort?: 'low' | 'medium' | 'high';
  /** Generate reasoning but do not return it (`:reasoning-exclude`, `reasoning.exclude`, `display: omitted`). */
  exclude: boolean;
  /**
   * How the client asked to see the thinking (Anthropic's `thinking.display`), as sent, whether the
   * gateway knows the mode or not: an adapter whose upstream takes it sends it unchanged (see
   * `ProviderAdapter.appliesReasoningDisplay`); for the others the gateway applies the modes it
   * knows (`hidesReasoning` in the client formats).
   */
  display?: string;
}

/**
 * Structured output: the reply's text must be JSON (`json_object`), valid against `schema` as well
 * (`json_schema`). Chat `response_format`, responses `text.format` and messages
 * `output_config.format` all parse into it; plain text is the absence of a format.
 */
export type ResponseFormat =
  | {
      type: 'json_schema';
      /** The client's name for the schema (chat and responses require one; messages have none). */
      name?: string;
      description?: string;
      schema: Record<string, unknown>;
      strict?: boolean;
      /** The client field it came from (`response_format`, `text.format`, `output_config.format`), named by a 400. */
      param: string;
    }
  | { type: 'json_object'; param: string };

export interface CanonicalRequest {
  /** Public model id from the catalog, without modifiers such as `:reasoning-exclude`. */
  model: string;
  /** Leading system prompt (chat `system` messages, responses `instructions`, messages `system`). */
  system?: string;
  messages: CanonicalMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  reasoning?: ReasoningOptions;
  stream: boolean;
  /** Chat `stream_options.include_usage`: a usage chunk ends the stream. */
  includeUsage?: boolean;
  logprobs?: boolean;
  topLogprobs?: number;
  /** Opaque end-user id for abuse tracking (chat `user`, messages `metadata.user_id`). */
  user?: string;
  /** Absent: plain text. */
  responseFormat?: ResponseFormat;
  /**
   * Anthropic beta flags the client sent (the `anthropic-beta` header, the body's `betas`), as sent:
   * passed on to Anthropic upstreams, which the flags steer; other upstreams know none.
   */
  betas?: string[];
}

export interface Usage {
  /** Every input token, cache reads and writes included (as OpenAI's `prompt_tokens`, unlike Anthropic's `input_tokens`). */
  inputTokens: number;
  /** Includes reasoning tokens, which are billed as output. */
  outputTokens: number;
  reasoningTokens?: number;
  /** Of `inputTokens`, those read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the provider's prompt cache (Anthropic's `cache_creation_input_tokens`). */
  cacheWriteTokens?: number;
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  topLogprobs?: { token: string; logprob: number }[];
}

export interface CanonicalResponse {
  id: string;
  /** Public model id. */
  model: string;
  /** Unix seconds. */
  created: number;
  text: string;
  reasoning?: string;
  reasoningSignature?: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /** The stop string that ended generation, when one did. */
  stopSequence?: string;
  usage: Usage;
  logprobs?: TokenLogprob[];
}

/** What an adapter's stream yields, in order: start, deltas, finish, usage. */
export type CanonicalStreamEvent =
  /**
   * `usage`: the input usage when it is known as the stream starts (Anthropic's `message_start`),
   * so a client format can show it up front and a stream cut short is billed what the upstream reported.
   */
  | { type: 'start'; id: string; model: string; created: number; usage?: Usage }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'reasoning_signature'; signature: string }
  | { type: 'text_delta'; text: string; logprobs?: TokenLogprob[] }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsDelta: string }
  | { type: 'finish'; stopReason: StopReason; stopSequence?: string }
  | { type: 'usage'; usage: Usage };
