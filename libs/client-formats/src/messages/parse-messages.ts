/**
 * Anthropic Messages request body → canonical request.
 */
import type { CanonicalRequest, ContentPart, ImagePart, ToolCall, ToolChoice, ToolDefinition } from '@gateway/canonical';
import { ErrorCode } from '@gateway/contracts';
import { DomainError } from '@gateway/errors';
import { ConversationBuilder } from '../common/conversation';
import { parseMessagesOutputFormat } from '../common/response-format';
import {
  buildReasoning,
  compact,
  parseEffort,
  requirePresent,
  type Effort,
  type ParsedClientRequest,
  type ParseOptions,
  type ReasoningSignals,
} from '../common/parse-common';
import {
  fail,
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
} from '../common/validate';

const ROLES = ['user', 'assistant', 'system'] as const;

export function parseMessagesRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = requireBody(body);
  const model = requireModel(b);
  const conversation = new ConversationBuilder();
  const system = parseSystem(b.system);
  if (system !== undefined) conversation.addSystem(system);
  parseConversation(conversation, b.messages);
  const metadata = optionalObject(b, 'metadata', '');
  const userId = metadata ? optionalString(metadata, 'user_id', 'metadata') : undefined;
  parseAcceptedExtras(b);

  const request: CanonicalRequest = compact({
    model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: optionalNumber(b, 'max_tokens', '', { integer: true, min: 1 }),
    temperature: optionalNumber(b, 'temperature', '', { min: 0, max: 1 }),
    // Anthropic documents 0 as "not set" for both.
    topP: optionalNumber(b, 'top_p', '', { min: 0, max: 1 }) || undefined,
    topK: optionalNumber(b, 'top_k', '', { integer: true, min: 0 }) || undefined,
    stop: parseStopSequences(b.stop_sequences),
    tools: parseTools(b.tools),
    toolChoice: parseToolChoice(b.tool_choice),
    reasoning: buildReasoning(parseReasoningSignals(b), options),
    stream: optionalBoolean(b, 'stream', '') ?? false,
    user: userId,
    responseFormat: parseMessagesOutputFormat(b),
  });
  return { request, reasoningContentCompat: false };
}

function parseSystem(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  return requireArray(value, 'system')
    .map((block, i) => textBlock(requireObject(block, path('system', i)), path('system', i)))
    .join('\n\n');
}

function parseConversation(conversation: ConversationBuilder, value: unknown): void {
  requirePresent(value, 'messages');
  const messages = requireArray(value, 'messages', { nonEmpty: true });
  messages.forEach((item, i) => {
    const at = path('messages', i);
    const message = requireObject(item, at);
    requirePresent(message.role, path(at, 'role'));
    const role = requireOneOf(message.role, ROLES, path(at, 'role'));
    if (role === 'system' && i === 0) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        'messages.0: a system role may not be the first message; use the top-level system field',
        'messages.0.role',
      );
    }
    requirePresent(message.content, path(at, 'content'));
    if (role === 'assistant') addAssistant(conversation, message.content, path(at, 'content'));
    else addUserOrSystem(conversation, role, message.content, path(at, 'content'));
  });
}

/**
 * A user (or mid-conversation system) turn. Blocks are taken in order: `tool_result` blocks become
 * canonical tool messages, `mid_conv_system` blocks system messages, and the rest the turn's
 * user (or system) content between them.
 */
function addUserOrSystem(conversation: ConversationBuilder, role: 'user' | 'system', content: unknown, at: string): void {
  if (typeof content === 'string') {
    if (role === 'system') conversation.addMidConversationSystem(content);
    else conversation.addUser([{ type: 'text', text: content }]);
    return;
  }
  let pending: ContentPart[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    if (role === 'system') conversation.addMidConversationSystem(plainText(pending));
    else conversation.addUser(pending);
    pending = [];
  };
  requireArray(content, at).forEach((item, i) => {
    const blockAt = path(at, i);
    const block = requireObject(item, blockAt);
    const type = requireString(block.type, path(blockAt, 'type'));
    switch (type) {
      case 'tool_result':
        flush();
        return addToolResult(conversation, block, blockAt);
      case 'mid_conv_system':
        flush();
        return conversation.addMidConversationSystem(midConversationSystem(block, blockAt));
      case 'tool_addition':
      case 'tool_removal':
        return; // tool-list edits the router cannot forward; accepted so such clients keep working
      default:
        pending.push(userBlock(block, type, blockAt));
    }
  });
  flush();
}

function userBlock(block: JsonObject, type: string, at: string): ContentPart {
  switch (type) {
    case 'text':
      return { type: 'text', text: textBlock(block, at) };
    case 'image':
      return imageBlock(block, at);
    case 'document':
      return { type: 'text', text: documentText(block, at) };
    default:
      return fail(path(at, 'type'), `unsupported content block type '${type}'; expected 'text', 'image', 'document', 'tool_result' or 'mid_conv_system'`);
  }
}

function textBlock(block: JsonObject, at: string): string {
  requireOneOf(block.type, ['text'] as const, path(at, 'type'));
  return requireString(block.text, path(at, 'text'));
}

function imageBlock(block: JsonObject, at: string): ImagePart {
  const sourceAt = path(at, 'source');
  const source = requireObject(block.source, sourceAt);
  const kind = requireOneOf(source.type, ['base64', 'url'] as const, path(sourceAt, 'type'));
  if (kind === 'url') return { type: 'image', url: requireString(source.url, path(sourceAt, 'url'), { nonEmpty: true }) };
  return {
    type: 'image',
    mediaType: requireString(source.media_type, path(sourceAt, 'media_type'), { nonEmpty: true }),
    data: requireString(source.data, path(sourceAt, 'data'), { nonEmpty: true }),
  };
}

/** Documents the router can pass on are those that are text: plain-text or content-block sources. */
function documentText(block: JsonObject, at: string): string {
  const sourceAt = path(at, 'source');
  const source = requireObject(block.source, sourceAt);
  const kind = requireString(source.type, path(sourceAt, 'type'));
  if (kind === 'text') return requireString(source.data, path(sourceAt, 'data'));
  if (kind === 'content') {
    if (typeof source.content === 'string') return source.content;
    return requireArray(source.content, path(sourceAt, 'content'))
      .map((b, i) => textBlock(requireObject(b, path(sourceAt, 'content', i)), path(sourceAt, 'content', i)))
      .join('\n\n');
  }
  return fail(path(sourceAt, 'type'), `unsupported document source '${kind}'; only 'text' and 'content' documents are supported`);
}

function midConversationSystem(block: JsonObject, at: string): string {
  const contentAt = path(at, 'content');
  if (typeof block.content === 'string') return block.content;
  return requireArray(block.content, contentAt)
    .map((b, i) => textBlock(requireObject(b, path(contentAt, i)), path(contentAt, i)))
    .join('\n\n');
}

function plainText(parts: ContentPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n');
}

/** `tool_result` content is a string or text/image blocks; images follow as user content. */
function addToolResult(conversation: ConversationBuilder, block: JsonObject, at: string): void {
  const id = requireString(block.tool_use_id, path(at, 'tool_use_id'), { nonEmpty: true });
  const isError = optionalBoolean(block, 'is_error', at);
  const contentAt = path(at, 'content');
  const content = block.content;
  if (content === undefined || content === null || typeof content === 'string') {
    conversation.addToolResult(id, content ?? '', isError);
    return;
  }
  const texts: string[] = [];
  const images: ContentPart[] = [];
  requireArray(content, contentAt).forEach((item, i) => {
    const b = requireObject(item, path(contentAt, i));
    const type = requireOneOf(b.type, ['text', 'image', 'document'] as const, path(contentAt, i, 'type'));
    if (type === 'image') images.push(imageBlock(b, path(contentAt, i)));
    else if (type === 'document') texts.push(documentText(b, path(contentAt, i)));
    else texts.push(textBlock(b, path(contentAt, i)));
  });
  conversation.addToolResult(id, texts.join('\n\n'), isError, images);
}

function addAssistant(conversation: ConversationBuilder, content: unknown, at: string): void {
  if (typeof content === 'string') {
    conversation.addAssistant(content === '' ? [] : [{ type: 'text', text: content }]);
    return;
  }
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  requireArray(content, at).forEach((item, i) => {
    const blockAt = path(at, i);
    const block = requireObject(item, blockAt);
    const type = requireString(block.type, path(blockAt, 'type'));
    switch (type) {
      case 'text':
        parts.push({ type: 'text', text: textBlock(block, blockAt) });
        return;
      case 'thinking':
        parts.push(thinkingPart(block, blockAt));
        return;
      case 'redacted_thinking':
        // Opaque, encrypted reasoning only Anthropic can read; canonical parts cannot carry it.
        requireString(block.data, path(blockAt, 'data'));
        return;
      case 'tool_use':
        toolCalls.push(toolUse(block, blockAt));
        return;
      default:
        // Server-tool blocks (`server_tool_use`, `web_search_tool_result`, ...) record work done on
        // Anthropic's side; they carry nothing another model could act on.
        if (isServerToolBlock(type)) return;
        fail(path(blockAt, 'type'), `unsupported assistant content block type '${type}'; expected 'text', 'thinking', 'redacted_thinking' or 'tool_use'`);
    }
  });
  conversation.addAssistant(parts, toolCalls);
}

function isServerToolBlock(type: string): boolean {
  return type === 'server_tool_use' || type.endsWith('_tool_result');
}

function thinkingPart(block: JsonObject, at: string): ContentPart {
  const signature = optionalString(block, 'signature', at);
  const text = requireString(block.thinking, path(at, 'thinking'));
  return signature ? { type: 'thinking', text, signature } : { type: 'thinking', text };
}

function toolUse(block: JsonObject, at: string): ToolCall {
  return {
    id: requireString(block.id, path(at, 'id'), { nonEmpty: true }),
    name: requireString(block.name, path(at, 'name'), { nonEmpty: true }),
    // Canonical arguments are JSON text, as OpenAI sends them.
    arguments: JSON.stringify(requireObject(block.input ?? {}, path(at, 'input'))),
  };
}

function parseStopSequences(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  return requireArray(value, 'stop_sequences').map((s, i) => requireString(s, path('stop_sequences', i)));
}

/**
 * Custom tools become canonical tools. Server tools (a versioned `type` such as
 * `web_search_20250305`, no `input_schema`) run on Anthropic's side and are skipped.
 */
function parseTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  const tools: ToolDefinition[] = [];
  requireArray(value, 'tools').forEach((item, i) => {
    const at = path('tools', i);
    const tool = requireObject(item, at);
    const type = optionalString(tool, 'type', at);
    if (type !== undefined && type !== 'custom' && tool.input_schema === undefined) return;
    requirePresent(tool.name, path(at, 'name'));
    requirePresent(tool.input_schema, path(at, 'input_schema'));
    const definition: ToolDefinition = {
      name: requireString(tool.name, path(at, 'name'), { nonEmpty: true }),
      parameters: requireObject(tool.input_schema, path(at, 'input_schema')),
    };
    const description = optionalString(tool, 'description', at);
    if (description !== undefined) definition.description = description;
    tools.push(definition);
  });
  return tools;
}

function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  const choice = requireObject(value, 'tool_choice');
  const type = requireOneOf(choice.type, ['auto', 'any', 'none', 'tool'] as const, 'tool_choice.type');
  optionalBoolean(choice, 'disable_parallel_tool_use', 'tool_choice');
  if (type === 'any') return 'required';
  if (type === 'tool') return { name: requireString(choice.name, 'tool_choice.name', { nonEmpty: true }) };
  return type;
}

/**
 * `thinking`: enabled (budget required) or adaptive turn reasoning on, disabled off; `display:
 * 'omitted'` means think but do not return it. `output_config.effort` refines enabled thinking.
 */
function parseReasoningSignals(b: JsonObject): ReasoningSignals {
  const thinking = optionalObject(b, 'thinking', '');
  const effort = outputEffort(b);
  if (!thinking) return {};
  const type = requireOneOf(thinking.type, ['enabled', 'adaptive', 'disabled'] as const, 'thinking.type');
  if (type === 'disabled') return { enabled: false };
  if (type === 'enabled') requirePresent(thinking.budget_tokens, 'thinking.budget_tokens');
  const signals: ReasoningSignals = {
    enabled: true,
    budgetTokens: optionalNumber(thinking, 'budget_tokens', 'thinking', { integer: true, min: 1 }),
    effort,
  };
  if (thinking.display !== undefined && thinking.display !== null) {
    const display = requireOneOf(thinking.display, ['summarized', 'omitted'] as const, 'thinking.display');
    signals.exclude = display === 'omitted';
  }
  return signals;
}

function outputEffort(b: JsonObject): Effort | undefined {
  const config = optionalObject(b, 'output_config', '');
  if (!config || config.effort === undefined || config.effort === null) return undefined;
  const effort = parseEffort(config.effort, 'output_config.effort');
  return effort === 'none' ? undefined : effort;
}

/** Fields accepted for compatibility and type-checked, with no canonical counterpart. */
function parseAcceptedExtras(b: JsonObject): void {
  if (b.betas !== undefined && b.betas !== null) {
    requireArray(b.betas, 'betas').forEach((beta, i) => requireString(beta, path('betas', i)));
  }
  optionalObject(b, 'context_management', '');
}
