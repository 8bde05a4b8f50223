import { randomUUID } from 'node:crypto';
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalStreamEvent,
  ContentPart,
  ImagePart,
  ResponseFormat,
  StopReason,
  ToolCall,
  ToolChoice,
  Usage,
} from '@gateway/canonical';
import { UpstreamError } from '../provider-adapter';
import { completeUsage } from '../token-count';
import { asRecord, malformedResponse } from '../upstream-http';
import { DomainError, ErrorCode } from '@gateway/errors';

/* ------------------------------------------------------------------------------------------------
 * Anthropic Messages wire types (only the fields we send or read).
 * ---------------------------------------------------------------------------------------------- */

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicImageSource }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export type AnthropicToolChoice = { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string };

export interface AnthropicMessagesRequest {
  model: string;
  system?: string;
  messages: AnthropicMessage[];
  max_tokens: number;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: { name: string; description?: string; input_schema: Record<string, unknown> }[];
  tool_choice?: AnthropicToolChoice;
  /** `display` as the client sent it, a mode the gateway does not know included. */
  thinking?: { type: 'enabled'; budget_tokens: number; display?: string };
  metadata?: { user_id: string };
  /** Anthropic's structured outputs, on models that have them. */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  stream: boolean;
}

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

type AnthropicResponseBlock = {
  type?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
};

export interface AnthropicMessagesResponse {
  id?: string;
  content?: AnthropicResponseBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

/** One `data:` payload of a Messages stream; `type` names the event. */
export interface AnthropicStreamEvent {
  type?: string;
  message?: { id?: string; usage?: AnthropicUsage };
  index?: number;
  content_block?: AnthropicResponseBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
    stop_sequence?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Anthropic requires `max_tokens`; this is what we ask for when the client did not say. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
/** Thinking budget when reasoning is enabled without one; also Anthropic's minimum. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/* ------------------------------------------------------------------------------------------------
 * Request: canonical → Anthropic
 * ---------------------------------------------------------------------------------------------- */

/**
 * `nativeStructuredOutputs`: the model takes `output_config.format` (catalog `structured_outputs`);
 * otherwise a requested format becomes the forced tool named by `formatToolName`.
 */
export function toAnthropicRequest(
  request: CanonicalRequest,
  upstreamModel: string,
  stream: boolean,
  nativeStructuredOutputs = false,
): AnthropicMessagesRequest {
  const thinkingBudget = request.reasoning?.enabled
    ? Math.max(request.reasoning.budgetTokens ?? ANTHROPIC_MIN_THINKING_BUDGET, ANTHROPIC_MIN_THINKING_BUDGET)
    : undefined;
  // Anthropic refuses forced tool use while thinking; said before any other check names another field.
  if (thinkingBudget !== undefined && request.responseFormat && formatToolName(request, nativeStructuredOutputs) !== undefined) {
    throw formatError(request.responseFormat, 'this model cannot combine a JSON response format with reasoning; turn reasoning off');
  }
  const body: AnthropicMessagesRequest = {
    model: upstreamModel,
    messages: toAnthropicMessages(request.messages),
    max_tokens: maxTokensFor(request.maxTokens, thinkingBudget),
    stream,
  };
  if (request.system) body.system = request.system;
  if (request.stop?.length) body.stop_sequences = request.stop;
  // With thinking on, Anthropic rejects temperature and top_k changes; leaving them out beats a 400.
  if (request.temperature !== undefined && thinkingBudget === undefined) body.temperature = request.temperature;
  if (request.topK !== undefined && thinkingBudget === undefined) body.top_k = request.topK;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      input_schema: withObjectType(tool.parameters),
    }));
  }
  if (request.toolChoice !== undefined) body.tool_choice = toAnthropicToolChoice(request.toolChoice);
  if (thinkingBudget !== undefined) {
    const display = request.reasoning?.display;
    body.thinking = { type: 'enabled', budget_tokens: thinkingBudget, ...(display !== undefined ? { display } : {}) };
  }
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  applyResponseFormat(body, request, nativeStructuredOutputs);
  return body;
}

/** Name of the forced tool generated for a JSON-only reply; the answer is that tool's input. */
const DEFAULT_FORMAT_TOOL = 'structured_output';
const FORMAT_TOOL_DESCRIPTION = 'Give your final answer by calling this tool: its input is the answer, as JSON matching the schema.';

/**
 * The tool whose input is the reply's JSON, when the requested format is asked for as a forced tool
 * call: any JSON-object request (Anthropic has no such mode), and a JSON schema on a model without
 * native structured outputs. None when the client forces one of its own tools (OpenAI answers
 * such a turn with that tool call too).
 */
export function formatToolName(request: CanonicalRequest, nativeStructuredOutputs: boolean): string | undefined {
  const format = request.responseFormat;
  if (!format || (nativeStructuredOutputs && format.type === 'json_schema')) return undefined;
  if (typeof request.toolChoice === 'object') return undefined;
  return (format.type === 'json_schema' && format.name) || DEFAULT_FORMAT_TOOL;
}

function applyResponseFormat(body: AnthropicMessagesRequest, request: CanonicalRequest, native: boolean): void {
  const format = request.responseFormat;
  if (!format) return;
  if (native && format.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: format.schema } };
    return;
  }
  const name = formatToolName(request, native);
  if (name === undefined) return;
  if (request.tools?.some((tool) => tool.name === name)) {
    throw formatError(format, `a tool is named '${name}' like the response format; rename one of them`);
  }
  const tool = {
    name,
    description: format.type === 'json_schema' ? (format.description ?? FORMAT_TOOL_DESCRIPTION) : FORMAT_TOOL_DESCRIPTION,
    input_schema: formatToolSchema(format),
  };
  // `none` keeps the client's tools out of this turn; otherwise the model may still call them.
  body.tools = request.toolChoice === 'none' ? [tool] : [...(body.tools ?? []), tool];
  body.tool_choice = body.tools.length === 1 ? { type: 'tool', name } : { type: 'any' };
}

/** A tool's input is an object: a schema whose root is anything else cannot be asked for this way. */
function formatToolSchema(format: ResponseFormat): Record<string, unknown> {
  if (format.type === 'json_object') return { type: 'object', additionalProperties: true };
  const type = format.schema['type'];
  if (type !== undefined && type !== 'object') {
    throw formatError(format, "on this model the schema's root must be an object (type: object)");
  }
  return withObjectType(format.schema);
}

function formatError(format: ResponseFormat, problem: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, `${format.param}: ${problem}`, format.param);
}

/**
 * `max_tokens` covers thinking and answer together and must exceed the thinking budget. A client's
 * limit is kept (reasoning counts against it, and its cost was reserved by it): one that leaves no
 * room past the budget is the client's 400, as Anthropic would answer. Without a client limit the
 * default leaves room for the answer on top of the budget.
 */
function maxTokensFor(maxTokens: number | undefined, thinkingBudget: number | undefined): number {
  if (thinkingBudget === undefined) return maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  if (maxTokens === undefined) {
    return thinkingBudget < ANTHROPIC_DEFAULT_MAX_TOKENS ? ANTHROPIC_DEFAULT_MAX_TOKENS : thinkingBudget + ANTHROPIC_DEFAULT_MAX_TOKENS;
  }
  if (maxTokens <= thinkingBudget) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `max_tokens (${maxTokens}) must be greater than the reasoning budget of ${thinkingBudget} tokens on this model ` +
        `(at least ${ANTHROPIC_MIN_THINKING_BUDGET}): reasoning tokens count against max_tokens`,
      'max_tokens',
    );
  }
  return maxTokens;
}

/** `input_schema` must be an object schema; a tool without parameters often sends `{}`. */
function withObjectType(schema: Record<string, unknown>): Record<string, unknown> {
  return schema['type'] === undefined ? { type: 'object', ...schema } : schema;
}

function toAnthropicToolChoice(choice: ToolChoice): AnthropicToolChoice {
  if (typeof choice !== 'string') return { type: 'tool', name: choice.name };
  if (choice === 'required') return { type: 'any' };
  return { type: choice };
}

/**
 * Anthropic needs strictly alternating user/assistant turns, so each canonical message becomes
 * blocks of one role and consecutive turns of the same role are merged.
 */
export function toAnthropicMessages(messages: CanonicalMessage[]): AnthropicMessage[] {
  const result: AnthropicMessage[] = [];
  for (const message of messages) {
    const turn = toAnthropicTurn(message);
    if (turn.content.length === 0) continue; // Anthropic rejects empty turns
    const previous = result[result.length - 1];
    if (previous?.role === turn.role) previous.content = mergeBlocks(previous.content, turn.content);
    else result.push(turn);
  }
  return result;
}

function toAnthropicTurn(message: CanonicalMessage): AnthropicMessage {
  switch (message.role) {
    case 'system':
      // The Messages API only has the top-level `system`. Hoisting a mid-conversation instruction
      // there would move it before turns it was meant to follow (and merge it with the original
      // system prompt), so it stays where it was, as user-turn text the model can tell apart.
      return { role: 'user', content: [{ type: 'text', text: `System: ${message.content}` }] };
    case 'user':
      return { role: 'user', content: message.content.flatMap(toUserBlock) };
    case 'assistant':
      return { role: 'assistant', content: toAssistantBlocks(message.content, message.toolCalls ?? []) };
    case 'tool':
      // Tool results travel in a user turn; consecutive ones merge into that one turn.
      return {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content, ...(message.isError ? { is_error: true } : {}) }],
      };
  }
}

/** Anthropic wants the tool results first in a user turn, before any text that follows them. */
function mergeBlocks(previous: AnthropicContentBlock[], next: AnthropicContentBlock[]): AnthropicContentBlock[] {
  const all = [...previous, ...next];
  return [...all.filter((block) => block.type === 'tool_result'), ...all.filter((block) => block.type !== 'tool_result')];
}

function toUserBlock(part: ContentPart): AnthropicContentBlock[] {
  if (part.type === 'text') return part.text.length > 0 ? [{ type: 'text', text: part.text }] : [];
  if (part.type === 'image') {
    const source = toImageSource(part);
    return source ? [{ type: 'image', source }] : [];
  }
  return []; // thinking only belongs to assistant turns
}

/** data: URLs and inline data become base64 sources; http(s) URLs are fetched by Anthropic. */
export function toImageSource(part: ImagePart): AnthropicImageSource | undefined {
  if (part.data) return { type: 'base64', media_type: part.mediaType ?? 'image/png', data: part.data };
  if (!part.url) return undefined;
  const dataUrl = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(part.url);
  if (dataUrl) return { type: 'base64', media_type: dataUrl[1], data: dataUrl[2] };
  return { type: 'url', url: part.url };
}

/**
 * Thinking goes back only with its signature (Anthropic rejects unsigned thinking, and a
 * signature is what lets it continue a tool-use turn), then text, then the tool calls.
 */
function toAssistantBlocks(parts: ContentPart[], toolCalls: ToolCall[]): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  for (const part of parts) {
    if (part.type === 'thinking' && part.signature) blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
    else if (part.type === 'text' && part.text.length > 0) blocks.push({ type: 'text', text: part.text });
  }
  for (const call of toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseToolInput(call.arguments) });
  return blocks;
}

/** Tool arguments are JSON text in canonical form; Anthropic wants the object (`{}` when it is not valid JSON). */
function parseToolInput(args: string): unknown {
  try {
    const parsed: unknown = JSON.parse(args);
    return asRecord(parsed) ?? {};
  } catch {
    return {};
  }
}

/* ------------------------------------------------------------------------------------------------
 * Response: Anthropic → canonical
 * ---------------------------------------------------------------------------------------------- */

/** `formatTool`: the forced tool whose input is the answer's JSON text (see `formatToolName`). */
export function fromAnthropicResponse(body: unknown, request: CanonicalRequest, formatTool?: string): CanonicalResponse {
  const response = body as AnthropicMessagesResponse;
  if (!asRecord(body) || !Array.isArray(response.content)) throw malformedResponse('a message without content', body);
  let text = '';
  let reasoning: string | undefined;
  let reasoningSignature: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const block of response.content) {
    if (block.type === 'text') text += block.text ?? '';
    else if (block.type === 'thinking') {
      reasoning = (reasoning ?? '') + (block.thinking ?? '');
      if (block.signature) reasoningSignature = block.signature;
    } else if (block.type === 'tool_use' && formatTool !== undefined && block.name === formatTool) {
      text += JSON.stringify(block.input ?? {});
    } else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id ?? '', name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) });
    }
    // redacted_thinking and server-tool blocks have no canonical form
  }
  const result: CanonicalResponse = {
    id: response.id ?? `msg_${randomUUID()}`,
    model: request.model,
    created: nowSeconds(), // Anthropic does not say when
    text,
    toolCalls,
    stopReason: formatTool !== undefined && answeredInFormat(response.stop_reason, toolCalls.length) ? 'stop' : fromAnthropicStopReason(response.stop_reason),
    usage: completeUsage(fromAnthropicUsage(response.usage), request, { text, reasoning, toolCalls }),
  };
  if (response.stop_reason === 'stop_sequence' && response.stop_sequence) result.stopSequence = response.stop_sequence;
  if (reasoning !== undefined) result.reasoning = reasoning;
  if (reasoningSignature !== undefined) result.reasoningSignature = reasoningSignature;
  return result;
}

/** The turn ended on the format tool alone: to the client, an ordinary finished answer. */
function answeredInFormat(reason: string | null | undefined, clientToolCalls: number): boolean {
  return reason === 'tool_use' && clientToolCalls === 0;
}

export function fromAnthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, pause_turn
      return 'stop';
  }
}

/**
 * Anthropic's `input_tokens` excludes cache reads and writes; canonical `inputTokens` is the whole
 * prompt (as OpenAI's `prompt_tokens`), with the cache reads and writes also reported on their own.
 */
export function fromAnthropicUsage(usage: AnthropicUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const result: Usage = { inputTokens: (usage.input_tokens ?? 0) + cacheRead + cacheWrite, outputTokens: usage.output_tokens ?? 0 };
  if (cacheRead > 0) result.cachedInputTokens = cacheRead;
  if (cacheWrite > 0) result.cacheWriteTokens = cacheWrite;
  return result;
}

/* ------------------------------------------------------------------------------------------------
 * Stream: Anthropic events → canonical events
 * ---------------------------------------------------------------------------------------------- */

/**
 * Turns the events of one streamed message into canonical events. Stateful: it remembers the
 * input usage from `message_start`, numbers tool_use blocks 0.. in order of appearance, and tracks
 * what was generated for usage estimates.
 */
export class AnthropicStreamMapper {
  private inputUsage: Usage | undefined;
  private finished = false;
  private stopped = false;
  private text = '';
  private reasoning = '';
  /** Content block index → tool call number and what we know of the call. */
  private readonly toolBlocks = new Map<number, { index: number; call: ToolCall }>();
  /** Content block index of a format-tool call → whether any of its JSON was streamed as text. */
  private readonly formatBlocks = new Map<number, boolean>();

  /** `formatTool`: the forced tool whose input is streamed as the answer's text (see `formatToolName`). */
  constructor(
    private readonly request: CanonicalRequest,
    private readonly formatTool?: string,
  ) {}

  /** True once `message_stop` arrived. */
  get done(): boolean {
    return this.stopped;
  }

  /** Events for one parsed event payload. Throws `UpstreamError` for an `error` event. */
  map(event: AnthropicStreamEvent): CanonicalStreamEvent[] {
    switch (event.type) {
      case 'message_start': {
        this.inputUsage = fromAnthropicUsage(event.message?.usage);
        const start: CanonicalStreamEvent = { type: 'start', id: event.message?.id ?? `msg_${randomUUID()}`, model: this.request.model, created: nowSeconds() };
        // Reported only when it counts something: a zero would hide the gateway's own count.
        return [this.inputUsage && this.inputUsage.inputTokens > 0 ? { ...start, usage: this.inputUsage } : start];
      }
      case 'content_block_start':
        return this.blockStart(event.index ?? 0, event.content_block ?? {});
      case 'content_block_delta':
        return this.blockDelta(event.index ?? 0, event.delta ?? {});
      case 'content_block_stop':
        return this.blockStop(event.index ?? 0);
      case 'message_delta':
        return this.messageDelta(event);
      case 'message_stop':
        this.stopped = true;
        return [];
      case 'error':
        throw anthropicStreamError(event.error);
      default: // ping, and event types added later
        return [];
    }
  }

  /** Called when the body ends: a stream without `message_delta` was cut off. */
  end(): void {
    if (!this.finished) throw new UpstreamError(502, 'upstream stream ended before the message finished', true);
  }

  private blockStart(blockIndex: number, block: AnthropicResponseBlock): CanonicalStreamEvent[] {
    if (block.type === 'text' && block.text) return this.textDelta(block.text);
    if (block.type === 'thinking' && block.thinking) return this.reasoningDelta(block.thinking);
    if (block.type !== 'tool_use') return [];
    if (this.formatTool !== undefined && block.name === this.formatTool) {
      this.formatBlocks.set(blockIndex, false);
      return [];
    }
    const index = this.toolBlocks.size;
    const call: ToolCall = { id: block.id ?? '', name: block.name ?? '', arguments: '' };
    this.toolBlocks.set(blockIndex, { index, call });
    return [{ type: 'tool_call_start', index, id: call.id, name: call.name }];
  }

  private blockDelta(blockIndex: number, delta: NonNullable<AnthropicStreamEvent['delta']>): CanonicalStreamEvent[] {
    switch (delta.type) {
      case 'text_delta':
        return delta.text ? this.textDelta(delta.text) : [];
      case 'thinking_delta':
        return delta.thinking ? this.reasoningDelta(delta.thinking) : [];
      case 'signature_delta':
        return delta.signature ? [{ type: 'reasoning_signature', signature: delta.signature }] : [];
      case 'input_json_delta': {
        if (this.formatBlocks.has(blockIndex)) {
          if (!delta.partial_json) return [];
          this.formatBlocks.set(blockIndex, true);
          return this.textDelta(delta.partial_json);
        }
        const tool = this.toolBlocks.get(blockIndex);
        if (!tool || !delta.partial_json) return [];
        tool.call.arguments += delta.partial_json;
        return [{ type: 'tool_call_delta', index: tool.index, argumentsDelta: delta.partial_json }];
      }
      default:
        return [];
    }
  }

  /** A tool called without arguments streams no JSON at all; clients still expect `{}` to parse. */
  private blockStop(blockIndex: number): CanonicalStreamEvent[] {
    if (this.formatBlocks.get(blockIndex) === false) return this.textDelta('{}');
    const tool = this.toolBlocks.get(blockIndex);
    if (!tool || tool.call.arguments !== '') return [];
    tool.call.arguments = '{}';
    return [{ type: 'tool_call_delta', index: tool.index, argumentsDelta: '{}' }];
  }

  /** The finish, and the usage: input from `message_start` (unless newer API versions repeat it here), output from here. */
  private messageDelta(event: AnthropicStreamEvent): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    if (!this.finished) {
      this.finished = true;
      const formatAnswer = this.formatBlocks.size > 0 && answeredInFormat(event.delta?.stop_reason, this.toolBlocks.size);
      const stopReason = formatAnswer ? 'stop' : fromAnthropicStopReason(event.delta?.stop_reason);
      const stopSequence = event.delta?.stop_reason === 'stop_sequence' ? (event.delta.stop_sequence ?? undefined) : undefined;
      events.push(stopSequence ? { type: 'finish', stopReason, stopSequence } : { type: 'finish', stopReason });
    }
    const reported = this.reportedUsage(event.usage);
    const toolCalls = [...this.toolBlocks.values()].map((tool) => tool.call);
    const usage = completeUsage(reported, this.request, { text: this.text, reasoning: this.reasoning || undefined, toolCalls });
    events.push({ type: 'usage', usage });
    return events;
  }

  private reportedUsage(deltaUsage: AnthropicUsage | undefined): Usage | undefined {
    if (!deltaUsage && !this.inputUsage) return undefined;
    const input = deltaUsage?.input_tokens !== undefined ? fromAnthropicUsage(deltaUsage) : this.inputUsage;
    return { ...input, inputTokens: input?.inputTokens ?? 0, outputTokens: deltaUsage?.output_tokens ?? 0 };
  }

  private textDelta(text: string): CanonicalStreamEvent[] {
    this.text += text;
    return [{ type: 'text_delta', text }];
  }

  private reasoningDelta(text: string): CanonicalStreamEvent[] {
    this.reasoning += text;
    return [{ type: 'reasoning_delta', text }];
  }
}

/** Anthropic error types and the HTTP status each stands for (the status decides retryability). */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function anthropicStreamError(error: AnthropicStreamEvent['error']): UpstreamError {
  const status = ERROR_TYPE_STATUS[error?.type ?? ''] ?? 500;
  return UpstreamError.fromStatus(status, error?.message ?? `upstream stream error (${error?.type ?? 'unknown'})`, error);
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
