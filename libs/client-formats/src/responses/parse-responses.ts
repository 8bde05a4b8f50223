/**
 * OpenAI Responses request body → canonical request.
 *
 * Everything the model should see is in `input`: a string, or the flat item list OpenAI's SDKs send
 * (messages, function calls and their outputs, reasoning items replayed from an earlier response).
 * `previous_response_id` and `item_reference` items refer to stored responses: the router replaces
 * them with the stored items (`stored-state.ts`) before this parse sees the body.
 */
import type { CanonicalRequest, ContentPart, ToolChoice, ToolDefinition } from '@gateway/canonical';
import { ConversationBuilder } from '../common/conversation';
import { parseResponsesTextFormat } from '../common/response-format';
import { functionDefinition } from '../chat/parse-chat';
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
  fail,
  isObject,
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

const MESSAGE_ROLES = ['user', 'assistant', 'system', 'developer'] as const;

export function parseResponsesRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = requireBody(body);
  const model = requireModel(b);
  const conversation = new ConversationBuilder();
  const instructions = optionalString(b, 'instructions', '');
  if (instructions !== undefined) conversation.addSystem(instructions);
  addInput(conversation, b.input);
  refuseWebSearch(b);

  const request: CanonicalRequest = compact({
    model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: optionalNumber(b, 'max_output_tokens', '', { integer: true, min: 1 }),
    temperature: optionalNumber(b, 'temperature', '', { min: 0, max: 2 }),
    topP: optionalNumber(b, 'top_p', '', { min: 0, max: 1 }),
    tools: parseTools(b.tools),
    toolChoice: parseToolChoice(b.tool_choice),
    reasoning: buildReasoning(parseReasoningSignals(b), options),
    stream: optionalBoolean(b, 'stream', '') ?? false,
    logprobs: wantsLogprobs(b.include),
    topLogprobs: optionalNumber(b, 'top_logprobs', '', { integer: true, min: 0, max: 20 }),
    user: optionalString(b, 'user', '') ?? optionalString(b, 'safety_identifier', ''),
    responseFormat: parseResponsesTextFormat(b),
  });
  if (request.messages.length === 0) fail('input', 'must contain at least one message');
  return {
    request,
    reasoningContentCompat: false,
    metadata: parseMetadata(b.metadata),
    store: optionalBoolean(b, 'store', '') ?? true,
    previousResponseId: optionalString(b, 'previous_response_id', ''),
  };
}

function addInput(conversation: ConversationBuilder, input: unknown): void {
  requirePresent(input, 'input');
  if (typeof input === 'string') {
    conversation.addUser([{ type: 'text', text: input }]);
    return;
  }
  requireArray(input, 'input', { nonEmpty: true }).forEach((item, i) => addItem(conversation, requireObject(item, path('input', i)), path('input', i)));
}

function addItem(conversation: ConversationBuilder, item: JsonObject, at: string): void {
  const type = item.type ?? 'message';
  switch (type) {
    case 'message':
      return addMessage(conversation, item, at);
    case 'function_call':
      conversation.appendToAssistant(
        [],
        [
          {
            id: requireString(item.call_id, path(at, 'call_id'), { nonEmpty: true }),
            name: requireString(item.name, path(at, 'name'), { nonEmpty: true }),
            arguments: requireString(item.arguments, path(at, 'arguments')),
          },
        ],
      );
      return;
    case 'function_call_output':
      return addFunctionOutput(conversation, item, at);
    case 'reasoning': {
      // Replayed reasoning from an earlier turn opens that assistant turn. One with only
      // `encrypted_content` (readable by OpenAI alone) adds nothing.
      const parts = reasoningParts(item, at);
      if (parts.length > 0) conversation.appendToAssistant(parts);
      return;
    }
    default:
      fail(path(at, 'type'), `unsupported input item type ${JSON.stringify(type)}; expected 'message', 'function_call', 'function_call_output' or 'reasoning'`);
  }
}

function addMessage(conversation: ConversationBuilder, item: JsonObject, at: string): void {
  requirePresent(item.role, path(at, 'role'));
  const role = requireOneOf(item.role, MESSAGE_ROLES, path(at, 'role'));
  const contentAt = path(at, 'content');
  requirePresent(item.content, contentAt);
  if (role === 'system' || role === 'developer') {
    conversation.addSystem(textOf(contentParts(item.content, contentAt), contentAt));
  } else if (role === 'assistant') {
    conversation.appendToAssistant(contentParts(item.content, contentAt).filter((p) => p.type !== 'text' || p.text !== ''));
  } else {
    conversation.addUser(contentParts(item.content, contentAt));
  }
}

/** Message content: a string, or input/output parts (assistant history uses `output_text`). */
function contentParts(value: unknown, at: string): ContentPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return requireArray(value, at).map((part, i) => contentPart(requireObject(part, path(at, i)), path(at, i)));
}

function contentPart(part: JsonObject, at: string): ContentPart {
  const type = requireOneOf(part.type, ['input_text', 'output_text', 'refusal', 'input_image'] as const, path(at, 'type'));
  if (type === 'refusal') return { type: 'text', text: requireString(part.refusal, path(at, 'refusal')) };
  if (type !== 'input_image') return { type: 'text', text: requireString(part.text, path(at, 'text')) };
  if (part.image_url === undefined || part.image_url === null) {
    // `file_id` points at OpenAI's file store, which the router cannot read.
    fail(path(at, 'image_url'), 'is required (file_id images are not supported)');
  }
  return { type: 'image', url: requireString(part.image_url, path(at, 'image_url'), { nonEmpty: true }) };
}

/** System text must be plain text. */
function textOf(parts: ContentPart[], at: string): string {
  return parts.map((p, i) => (p.type === 'text' ? p.text : fail(path(at, i, 'type'), 'system and developer messages may only contain text'))).join('');
}

function addFunctionOutput(conversation: ConversationBuilder, item: JsonObject, at: string): void {
  const callId = requireString(item.call_id, path(at, 'call_id'), { nonEmpty: true });
  const outputAt = path(at, 'output');
  requirePresent(item.output, outputAt);
  if (typeof item.output === 'string') {
    conversation.addToolResult(callId, item.output);
    return;
  }
  const parts = contentParts(item.output, outputAt);
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  conversation.addToolResult(
    callId,
    text,
    undefined,
    parts.filter((p) => p.type === 'image'),
  );
}

/** A reasoning item's summary (or, failing that, its raw content) as one thinking part. */
function reasoningParts(item: JsonObject, at: string): ContentPart[] {
  const texts = (key: 'summary' | 'content'): string[] => {
    const value = item[key];
    if (value === undefined || value === null) return [];
    return requireArray(value, path(at, key)).map((part, i) => {
      const p = requireObject(part, path(at, key, i));
      return requireString(p.text, path(at, key, i, 'text'));
    });
  };
  const summary = texts('summary');
  const text = (summary.length > 0 ? summary : texts('content')).join('\n\n');
  return text ? [{ type: 'thinking', text }] : [];
}

/**
 * Accepts both the spec's nested `{type:'function', function:{...}}` and OpenAI's flat
 * `{type:'function', name, ...}`. Hosted tools (`web_search`, `file_search`, ...) run on OpenAI's
 * side and cannot be offered to other models, so they are skipped.
 */
function parseTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  const tools: ToolDefinition[] = [];
  requireArray(value, 'tools').forEach((item, i) => {
    const at = path('tools', i);
    const tool = requireObject(item, at);
    const type = requireString(tool.type, path(at, 'type'), { nonEmpty: true });
    if (type !== 'function') return;
    tools.push(isObject(tool.function) ? functionDefinition(tool.function, path(at, 'function')) : functionDefinition(tool, at));
  });
  return tools;
}

function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return requireOneOf(value, ['auto', 'none', 'required'] as const, 'tool_choice');
  const choice = requireObject(value, 'tool_choice');
  requireOneOf(choice.type, ['function'] as const, 'tool_choice.type');
  if (isObject(choice.function)) {
    return { name: requireString(choice.function.name, 'tool_choice.function.name', { nonEmpty: true }) };
  }
  return { name: requireString(choice.name, 'tool_choice.name', { nonEmpty: true }) };
}

/**
 * `reasoning: {effort?, summary?}` asks for reasoning. A `summary` of `false` (the spec's boolean
 * form) asks for it not to be returned.
 */
function parseReasoningSignals(b: JsonObject): ReasoningSignals {
  const reasoning = optionalObject(b, 'reasoning', '');
  if (!reasoning) return {};
  const signals: ReasoningSignals = { enabled: true };
  if (reasoning.effort !== undefined && reasoning.effort !== null) {
    const effort = parseEffort(reasoning.effort, 'reasoning.effort');
    if (effort === 'none') signals.enabled = false;
    else signals.effort = effort;
  }
  const summary = reasoning.summary;
  if (typeof summary === 'boolean') signals.exclude = !summary;
  else if (summary !== undefined && summary !== null) {
    requireOneOf(summary, ['auto', 'concise', 'detailed'] as const, 'reasoning.summary');
  }
  return signals;
}

/** Responses ask for logprobs through `include: ['message.output_text.logprobs']`. */
function wantsLogprobs(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  const include = requireArray(value, 'include').map((entry, i) => requireString(entry, path('include', i)));
  return include.includes('message.output_text.logprobs') || undefined;
}

/** OpenAI metadata: an object of string values, echoed back on the response. */
function parseMetadata(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  const metadata = requireObject(value, 'metadata');
  for (const [key, entry] of Object.entries(metadata)) requireString(entry, path('metadata', key));
  return metadata;
}
