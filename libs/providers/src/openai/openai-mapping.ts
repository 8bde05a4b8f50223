import { randomUUID } from 'node:crypto';
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalStreamEvent,
  ContentPart,
  ResponseFormat,
  StopReason,
  TokenLogprob,
  ToolCall,
  ToolChoice,
  Usage,
} from '@gateway/canonical';
import { UpstreamError } from '../provider-adapter';
import { completeUsage } from '../token-count';
import { asRecord, malformedResponse, upstreamErrorMessage } from '../upstream-http';

/* ------------------------------------------------------------------------------------------------
 * OpenAI Chat Completions wire types (only the fields we send or read). Response fields are all
 * optional: OpenAI-compatible servers (vLLM, Ollama, OpenRouter, …) differ in what they include.
 * ---------------------------------------------------------------------------------------------- */

export type OpenAIContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAIMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAIContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type OpenAIToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIMessage[];
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  stop?: string[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean } }[];
  tool_choice?: OpenAIToolChoice;
  logprobs?: boolean;
  top_logprobs?: number;
  reasoning_effort?: 'low' | 'medium' | 'high';
  user?: string;
  response_format?: OpenAIResponseFormat;
  stream: boolean;
  stream_options?: { include_usage: boolean };
}

export type OpenAIResponseFormat =
  { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean } };

export interface OpenAILogprobEntry {
  token?: string;
  logprob?: number;
  top_logprobs?: { token?: string; logprob?: number }[];
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

interface OpenAIResponseMessage {
  content?: string | null;
  reasoning?: string | null;
  reasoning_content?: string | null;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[] | null;
}

export interface OpenAIChatResponse {
  id?: string;
  created?: number;
  choices?: {
    message?: OpenAIResponseMessage;
    finish_reason?: string | null;
    logprobs?: { content?: OpenAILogprobEntry[] | null } | null;
  }[];
  usage?: OpenAIUsage | null;
}

export interface OpenAIChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

export interface OpenAIChatChunk {
  id?: string;
  created?: number;
  choices?: {
    delta?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null; tool_calls?: OpenAIChunkToolCall[] | null };
    finish_reason?: string | null;
    logprobs?: { content?: OpenAILogprobEntry[] | null } | null;
  }[];
  usage?: OpenAIUsage | null;
  /** Some OpenAI-compatible servers report a mid-stream failure as a chunk with `error`. */
  error?: unknown;
}

/* ------------------------------------------------------------------------------------------------
 * Request: canonical → OpenAI
 * ---------------------------------------------------------------------------------------------- */

/** The Chat Completions body for a canonical request, addressed to `upstreamModel`. */
export function toOpenAIRequest(request: CanonicalRequest, upstreamModel: string, stream: boolean): OpenAIChatRequest {
  const body: OpenAIChatRequest = { model: upstreamModel, messages: toOpenAIMessages(request), stream };
  if (stream) body.stream_options = { include_usage: true }; // always: we meter every streamed call
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.stop?.length) body.stop = request.stop;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        parameters: tool.parameters,
        // Only as the client said: Chat Completions' own default (not strict) otherwise.
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (request.toolChoice !== undefined) body.tool_choice = toOpenAIToolChoice(request.toolChoice);
  if (request.logprobs) {
    body.logprobs = true;
    if (request.topLogprobs !== undefined) body.top_logprobs = request.topLogprobs;
  }
  // Chat Completions has no token budget for reasoning, only an effort level (top_k is not supported at all).
  if (request.reasoning?.enabled && request.reasoning.effort) body.reasoning_effort = request.reasoning.effort;
  if (request.user !== undefined) body.user = request.user;
  if (request.responseFormat) body.response_format = toOpenAIResponseFormat(request.responseFormat);
  return body;
}

/** Chat Completions requires a schema name; a messages client gives none, so it gets OpenAI's usual placeholder. */
export function toOpenAIResponseFormat(format: ResponseFormat): OpenAIResponseFormat {
  if (format.type === 'json_object') return { type: 'json_object' };
  const spec: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean } = {
    name: format.name ?? 'response',
    schema: format.schema,
  };
  if (format.description !== undefined) spec.description = format.description;
  if (format.strict !== undefined) spec.strict = format.strict;
  return { type: 'json_schema', json_schema: spec };
}

export function toOpenAIMessages(request: CanonicalRequest): OpenAIMessage[] {
  const messages: OpenAIMessage[] = request.system ? [{ role: 'system', content: request.system }] : [];
  for (const message of request.messages) messages.push(toOpenAIMessage(message));
  return messages;
}

function toOpenAIMessage(message: CanonicalMessage): OpenAIMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: toOpenAIUserContent(message.content) };
    case 'assistant':
      return toOpenAIAssistantMessage(message.content, message.toolCalls);
    case 'tool':
      // Chat Completions has no error flag on tool results; say it in the text so the model knows.
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.isError ? `Error: ${message.content}` : message.content };
  }
}

/** A single text part stays a plain string (what every OpenAI-compatible server accepts). */
function toOpenAIUserContent(parts: ContentPart[]): string | OpenAIContentPart[] {
  const mapped: OpenAIContentPart[] = [];
  for (const part of parts) {
    if (part.type === 'text') mapped.push({ type: 'text', text: part.text });
    else if (part.type === 'image') {
      const url = imageUrl(part);
      if (url) mapped.push({ type: 'image_url', image_url: { url } });
    }
    // thinking parts only come from assistants; nothing to send for them in a user turn
  }
  if (mapped.length === 1 && mapped[0].type === 'text') return mapped[0].text;
  return mapped;
}

function imageUrl(part: { url?: string; mediaType?: string; data?: string }): string | undefined {
  if (part.url) return part.url;
  if (part.data) return `data:${part.mediaType ?? 'image/png'};base64,${part.data}`;
  return undefined;
}

/**
 * Assistant turns keep text and tool calls. Thinking parts are dropped: Chat Completions has no
 * way to send earlier reasoning back (and OpenAI keeps its own reasoning server-side).
 */
function toOpenAIAssistantMessage(parts: ContentPart[], toolCalls: ToolCall[] | undefined): OpenAIMessage {
  const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const message: OpenAIMessage = { role: 'assistant', content: text.length > 0 || !toolCalls?.length ? text : null };
  if (toolCalls?.length) {
    message.tool_calls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return message;
}

function toOpenAIToolChoice(choice: ToolChoice): OpenAIToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/* ------------------------------------------------------------------------------------------------
 * Response: OpenAI → canonical
 * ---------------------------------------------------------------------------------------------- */

/** Maps a Chat Completions response; `request` supplies the public model id and the prompt for usage estimates. */
export function fromOpenAIResponse(body: unknown, request: CanonicalRequest): CanonicalResponse {
  const response = body as OpenAIChatResponse;
  const choice = asRecord(body) && Array.isArray(response.choices) ? response.choices[0] : undefined;
  if (!choice) throw malformedResponse('a chat completion without choices', body);
  const message = choice.message ?? {};
  const text = typeof message.content === 'string' ? message.content : '';
  const reasoning = nonEmpty(message.reasoning) ?? nonEmpty(message.reasoning_content);
  const toolCalls = (message.tool_calls ?? []).map((call): ToolCall => ({
    id: call.id ?? `call_${randomUUID()}`,
    name: call.function?.name ?? '',
    arguments: call.function?.arguments ?? '',
  }));
  const result: CanonicalResponse = {
    id: response.id ?? `chatcmpl-${randomUUID()}`,
    model: request.model,
    created: response.created ?? nowSeconds(),
    text,
    toolCalls,
    stopReason: fromOpenAIFinishReason(choice.finish_reason, toolCalls.length > 0),
    usage: completeUsage(fromOpenAIUsage(response.usage), request, { text, reasoning, toolCalls }),
  };
  if (reasoning !== undefined) result.reasoning = reasoning;
  const logprobs = fromOpenAILogprobs(choice.logprobs?.content);
  if (logprobs) result.logprobs = logprobs;
  return result;
}

/**
 * `function_call` is the legacy name of `tool_calls`. Some compatible servers say `stop` while
 * returning tool calls; the tool calls are what the client has to act on, so they win.
 */
export function fromOpenAIFinishReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

export function fromOpenAIUsage(usage: OpenAIUsage | null | undefined): Usage | undefined {
  if (!usage || (usage.prompt_tokens === undefined && usage.completion_tokens === undefined)) return undefined;
  const result: Usage = { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
  const reasoningTokens = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoningTokens) result.reasoningTokens = reasoningTokens;
  const cachedTokens = usage.prompt_tokens_details?.cached_tokens;
  if (cachedTokens) result.cachedInputTokens = cachedTokens;
  return result;
}

export function fromOpenAILogprobs(entries: OpenAILogprobEntry[] | null | undefined): TokenLogprob[] | undefined {
  if (!entries) return undefined;
  return entries.map((entry) => {
    const mapped: TokenLogprob = { token: entry.token ?? '', logprob: entry.logprob ?? 0 };
    if (entry.top_logprobs?.length) {
      mapped.topLogprobs = entry.top_logprobs.map((top) => ({ token: top.token ?? '', logprob: top.logprob ?? 0 }));
    }
    return mapped;
  });
}

/* ------------------------------------------------------------------------------------------------
 * Stream: OpenAI chunks → canonical events
 * ---------------------------------------------------------------------------------------------- */

/**
 * Turns the chunks of one streamed chat completion into canonical events. Stateful: it emits
 * `start` once, numbers tool calls, remembers the finish reason and the last usage seen, and
 * counts what was generated so that `end()` can estimate usage the upstream did not send.
 * Usage is held back until `end()` because some compatible servers repeat it on several chunks.
 */
export class OpenAIStreamMapper {
  private started = false;
  private finished = false;
  private usage: Usage | undefined;
  private text = '';
  private reasoning = '';
  /** Every tool call so far, in order of appearance (their position is the canonical index). */
  private readonly toolCalls: ToolCall[] = [];
  /** Upstream tool call index → the call it currently continues. */
  private readonly byUpstreamIndex = new Map<number, ToolCall & { index: number }>();

  constructor(private readonly request: CanonicalRequest) {}

  /** Events for one parsed `data:` chunk (not `[DONE]`). Throws `UpstreamError` for an in-stream error. */
  map(chunk: OpenAIChatChunk): CanonicalStreamEvent[] {
    if (chunk.error !== undefined) throw inStreamError(chunk.error);
    const events: CanonicalStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push({ type: 'start', id: chunk.id ?? `chatcmpl-${randomUUID()}`, model: this.request.model, created: chunk.created ?? nowSeconds() });
    }
    const choice = chunk.choices?.[0];
    if (choice) {
      const delta = choice.delta ?? {};
      const reasoning = nonEmpty(delta.reasoning) ?? nonEmpty(delta.reasoning_content);
      if (reasoning !== undefined) {
        this.reasoning += reasoning;
        events.push({ type: 'reasoning_delta', text: reasoning });
      }
      if (delta.content) {
        this.text += delta.content;
        const logprobs = fromOpenAILogprobs(choice.logprobs?.content);
        events.push(logprobs ? { type: 'text_delta', text: delta.content, logprobs } : { type: 'text_delta', text: delta.content });
      }
      (delta.tool_calls ?? []).forEach((call, position) => events.push(...this.mapToolCall(call, position)));
      if (choice.finish_reason && !this.finished) {
        this.finished = true;
        events.push({ type: 'finish', stopReason: fromOpenAIFinishReason(choice.finish_reason, this.toolCalls.length > 0) });
      }
    }
    this.usage = fromOpenAIUsage(chunk.usage) ?? this.usage;
    return events;
  }

  /**
   * Events once the stream is over (`[DONE]` or the end of the body): the usage, reported or
   * counted. A stream that ends without a finish reason was cut off: that is an upstream failure.
   */
  end(): CanonicalStreamEvent[] {
    if (!this.finished) throw new UpstreamError(502, 'upstream stream ended before a finish reason', true);
    const output = { text: this.text, reasoning: this.reasoning || undefined, toolCalls: this.toolCalls };
    const usage = completeUsage(this.usage, this.request, output);
    return [{ type: 'usage', usage }];
  }

  /** The first fragment of a call carries its id and name, later ones pieces of the arguments. */
  private mapToolCall(call: OpenAIChunkToolCall, position: number): CanonicalStreamEvent[] {
    const upstreamIndex = call.index ?? position;
    const events: CanonicalStreamEvent[] = [];
    let known = this.byUpstreamIndex.get(upstreamIndex);
    // Some compatible servers leave out `index` and send each call whole: a new id is a new call.
    if (!known || (call.id && call.function?.name && call.id !== known.id)) {
      if (!call.id || !call.function?.name) return events; // arguments for a call we never saw start
      known = { index: this.toolCalls.length, id: call.id, name: call.function.name, arguments: '' };
      this.toolCalls.push(known);
      this.byUpstreamIndex.set(upstreamIndex, known);
      events.push({ type: 'tool_call_start', index: known.index, id: known.id, name: known.name });
    }
    const argumentsDelta = call.function?.arguments;
    if (argumentsDelta) {
      known.arguments += argumentsDelta;
      events.push({ type: 'tool_call_delta', index: known.index, argumentsDelta });
    }
    return events;
  }
}

/** `{error: {message, code}}` inside a 200 stream; `code` is an HTTP status on servers such as OpenRouter. */
function inStreamError(error: unknown): UpstreamError {
  const code = asRecord(error)?.['code'];
  const status = typeof code === 'number' && code >= 400 && code <= 599 ? code : 500;
  return UpstreamError.fromStatus(status, upstreamErrorMessage({ error }, status), error);
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
