/**
 * OpenAI Chat Completions request body → canonical request.
 */
import type { CanonicalRequest, ContentPart, ToolCall, ToolChoice, ToolDefinition } from '@gateway/canonical';
import { ConversationBuilder } from '../common/conversation';
import { parseChatResponseFormat } from '../common/response-format';
import {
  buildReasoning,
  compact,
  parseEffort,
  refuseWebSearch,
  requirePresent,
  type ParsedClientRequest,
  type ParseOptions,
  type ReasoningSignals,
} from '../common/parse-common';
import {
  type JsonObject,
  optionalBoolean,
  optionalNumber,
  optionalObject,
  optionalString,
  path,
  requireArray,
  requireBody,
  requireModel,
  requireObject,
  requireOneOf,
  requireString,
  stringOrStringArray,
} from '../common/validate';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

export function parseChatRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = requireBody(body);
  const model = requireModel(b);
  const conversation = parseMessages(b.messages);
  const stream = optionalBoolean(b, 'stream', '') ?? false;
  const streamOptions = optionalObject(b, 'stream_options', '');
  refuseWebSearch(b);

  const request: CanonicalRequest = compact({
    model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: optionalNumber(b, 'max_completion_tokens', '', { integer: true, min: 1 }) ?? optionalNumber(b, 'max_tokens', '', { integer: true, min: 1 }),
    temperature: optionalNumber(b, 'temperature', '', { min: 0, max: 2 }),
    topP: optionalNumber(b, 'top_p', '', { min: 0, max: 1 }),
    // 0 conventionally means "no top-k limit", as in the messages format.
    topK: optionalNumber(b, 'top_k', '', { integer: true, min: 0 }) || undefined,
    frequencyPenalty: optionalNumber(b, 'frequency_penalty', '', { min: -2, max: 2 }),
    presencePenalty: optionalNumber(b, 'presence_penalty', '', { min: -2, max: 2 }),
    stop: parseStop(b.stop),
    tools: parseTools(b.tools),
    toolChoice: parseToolChoice(b.tool_choice),
    reasoning: buildReasoning(parseReasoningSignals(b), options),
    stream,
    includeUsage: streamOptions ? optionalBoolean(streamOptions, 'include_usage', 'stream_options') : undefined,
    logprobs: optionalBoolean(b, 'logprobs', ''),
    topLogprobs: optionalNumber(b, 'top_logprobs', '', { integer: true, min: 0, max: 20 }),
    user: optionalString(b, 'user', ''),
    responseFormat: parseChatResponseFormat(b),
  });
  return { request, reasoningContentCompat: optionalBoolean(b, 'reasoning_content_compat', '') ?? false };
}

function parseMessages(value: unknown): ConversationBuilder {
  requirePresent(value, 'messages');
  const items = requireArray(value, 'messages', { nonEmpty: true });
  const conversation = new ConversationBuilder();
  items.forEach((item, i) => addMessage(conversation, requireObject(item, path('messages', i)), path('messages', i)));
  return conversation;
}

function addMessage(conversation: ConversationBuilder, message: JsonObject, at: string): void {
  requirePresent(message.role, path(at, 'role'));
  const role = requireOneOf(message.role, ROLES, path(at, 'role'));
  optionalString(message, 'name', at);
  switch (role) {
    case 'system':
    case 'developer': // the newer name OpenAI gives system instructions
      conversation.addSystem(joinedText(message.content, path(at, 'content')));
      return;
    case 'user':
      conversation.addUser(userContent(message.content, path(at, 'content')));
      return;
    case 'assistant':
      conversation.addAssistant(assistantContent(message, at), toolCalls(message.tool_calls, path(at, 'tool_calls')));
      return;
    case 'tool':
      requirePresent(message.tool_call_id, path(at, 'tool_call_id'));
      conversation.addToolResult(requireString(message.tool_call_id, path(at, 'tool_call_id')), joinedText(message.content, path(at, 'content')));
      return;
  }
}

/** System and tool content: a string, or text parts concatenated as the model would read them. */
function joinedText(value: unknown, at: string): string {
  requirePresent(value, at);
  if (typeof value === 'string') return value;
  return requireArray(value, at)
    .map((part, i) => {
      const p = requireObject(part, path(at, i));
      requireOneOf(p.type, ['text'] as const, path(at, i, 'type'));
      return requireString(p.text, path(at, i, 'text'));
    })
    .join('');
}

function userContent(value: unknown, at: string): ContentPart[] {
  requirePresent(value, at);
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return requireArray(value, at).map((part, i) => userPart(requireObject(part, path(at, i)), path(at, i)));
}

function userPart(part: JsonObject, at: string): ContentPart {
  const type = requireOneOf(part.type, ['text', 'image_url'] as const, path(at, 'type'));
  if (type === 'text') return { type: 'text', text: requireString(part.text, path(at, 'text')) };
  const image = requireObject(part.image_url, path(at, 'image_url'));
  return { type: 'image', url: requireString(image.url, path(at, 'image_url', 'url'), { nonEmpty: true }) };
}

/**
 * Assistant history: earlier reasoning (OpenRouter's `reasoning`, DeepSeek's `reasoning_content`)
 * is kept as a thinking part ahead of the text, the way the model produced it.
 */
function assistantContent(message: JsonObject, at: string): ContentPart[] {
  const parts: ContentPart[] = [];
  const reasoning = optionalString(message, 'reasoning_content', at) ?? optionalString(message, 'reasoning', at);
  if (reasoning) parts.push({ type: 'thinking', text: reasoning });
  const content = message.content;
  const contentAt = path(at, 'content');
  if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'text', text: content });
  } else if (content !== undefined && content !== null) {
    requireArray(content, contentAt).forEach((part, i) => parts.push(assistantPart(part, path(contentAt, i))));
  }
  return parts;
}

function assistantPart(value: unknown, at: string): ContentPart {
  const part = requireObject(value, at);
  const type = requireOneOf(part.type, ['text', 'refusal'] as const, path(at, 'type'));
  // A refusal in history is just what the assistant said.
  if (type === 'refusal') return { type: 'text', text: requireString(part.refusal, path(at, 'refusal')) };
  return { type: 'text', text: requireString(part.text, path(at, 'text')) };
}

function toolCalls(value: unknown, at: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  return requireArray(value, at).map((item, i) => {
    const call = requireObject(item, path(at, i));
    if (call.type !== undefined) requireOneOf(call.type, ['function'] as const, path(at, i, 'type'));
    const fn = requireObject(call.function, path(at, i, 'function'));
    return {
      id: requireString(call.id, path(at, i, 'id'), { nonEmpty: true }),
      name: requireString(fn.name, path(at, i, 'function', 'name'), { nonEmpty: true }),
      arguments: requireString(fn.arguments, path(at, i, 'function', 'arguments')),
    };
  });
}

function parseStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  return stringOrStringArray(value, 'stop', 4);
}

function parseTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  return requireArray(value, 'tools').map((item, i) => {
    const at = path('tools', i);
    const tool = requireObject(item, at);
    requireOneOf(tool.type, ['function'] as const, path(at, 'type'));
    return functionDefinition(requireObject(tool.function, path(at, 'function')), path(at, 'function'));
  });
}

/** `{name, description?, parameters?}` as both OpenAI formats spell a function tool. */
export function functionDefinition(fn: JsonObject, at: string): ToolDefinition {
  requirePresent(fn.name, path(at, 'name'));
  const definition: ToolDefinition = {
    name: requireString(fn.name, path(at, 'name'), { nonEmpty: true }),
    // OpenAI lets `parameters` be omitted for a function without arguments.
    parameters: optionalObject(fn, 'parameters', at) ?? { type: 'object', properties: {} },
  };
  const description = optionalString(fn, 'description', at);
  if (description !== undefined) definition.description = description;
  return definition;
}

function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return requireOneOf(value, ['auto', 'none', 'required'] as const, 'tool_choice');
  const choice = requireObject(value, 'tool_choice');
  requireOneOf(choice.type, ['function'] as const, 'tool_choice.type');
  const fn = requireObject(choice.function, 'tool_choice.function');
  return { name: requireString(fn.name, 'tool_choice.function.name', { nonEmpty: true }) };
}

/**
 * Chat clients ask for reasoning three ways: Anthropic-style `thinking`, OpenRouter-style
 * `reasoning` and OpenAI's `reasoning_effort`. An explicit `reasoning.enabled` wins over the rest.
 */
function parseReasoningSignals(b: JsonObject): ReasoningSignals {
  const signals: ReasoningSignals = {};
  const effort = b.reasoning_effort === undefined || b.reasoning_effort === null ? undefined : parseEffort(b.reasoning_effort, 'reasoning_effort');
  if (effort !== undefined) applyEffort(signals, effort);

  const thinking = optionalObject(b, 'thinking', '');
  if (thinking) {
    const type = requireOneOf(thinking.type, ['enabled', 'adaptive', 'disabled'] as const, 'thinking.type');
    signals.enabled = type !== 'disabled';
    signals.budgetTokens = optionalNumber(thinking, 'budget_tokens', 'thinking', { integer: true, min: 1 });
  }

  const reasoning = optionalObject(b, 'reasoning', '');
  if (reasoning) {
    signals.exclude = optionalBoolean(reasoning, 'exclude', 'reasoning');
    const maxTokens = optionalNumber(reasoning, 'max_tokens', 'reasoning', { integer: true, min: 1 });
    if (maxTokens !== undefined) {
      signals.budgetTokens = maxTokens;
      signals.enabled = true;
    }
    if (reasoning.effort !== undefined && reasoning.effort !== null) {
      applyEffort(signals, parseEffort(reasoning.effort, 'reasoning.effort'));
    }
    const enabled = optionalBoolean(reasoning, 'enabled', 'reasoning');
    if (enabled !== undefined) signals.enabled = enabled;
  }
  return signals;
}

function applyEffort(signals: ReasoningSignals, effort: ReturnType<typeof parseEffort>): void {
  if (effort === 'none') {
    signals.enabled = false;
    return;
  }
  signals.effort = effort;
  signals.enabled = true;
}
