/**
 * OpenAI Chat Completions request body → canonical request. `ChatCompletionRequest` (chat.schema.ts)
 * checks the body; what is left here is what a schema cannot say: how the fields become canonical.
 */
import type { CanonicalRequest, ContentPart, ToolCall, ToolChoice, ToolDefinition } from '@gateway/canonical';
import { ConversationBuilder } from '../common/conversation';
import { chatResponseFormat } from '../common/response-format';
import { buildReasoning, compact, effortSignals, type ParsedClientRequest, type ParseOptions, type ReasoningSignals } from '../common/parse-common';
import { compileRequestValidator } from '../common/schema';
import type { FunctionDefinition } from '../common/common.schema';
import { ChatCompletionRequest, type ChatMessage } from './chat.schema';

const validate = compileRequestValidator(ChatCompletionRequest);

export function parseChatRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = validate(body);
  const conversation = new ConversationBuilder();
  for (const message of b.messages) addMessage(conversation, message);

  const request: CanonicalRequest = compact({
    model: b.model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: b.max_completion_tokens ?? b.max_tokens ?? undefined,
    temperature: b.temperature ?? undefined,
    topP: b.top_p ?? undefined,
    // 0 conventionally means "no top-k limit", as in the messages format.
    topK: b.top_k || undefined,
    frequencyPenalty: b.frequency_penalty ?? undefined,
    presencePenalty: b.presence_penalty ?? undefined,
    stop: b.stop === undefined || b.stop === null ? undefined : typeof b.stop === 'string' ? [b.stop] : b.stop,
    // Tools of another type are skipped (chat.schema.ts): no upstream the gateway calls is sent them.
    tools: b.tools?.flatMap((tool) => (tool.type === 'function' ? [functionDefinition(tool.function as FunctionDefinition)] : [])),
    toolChoice: toolChoice(b.tool_choice),
    reasoning: buildReasoning(reasoningSignals(b), options),
    stream: b.stream ?? false,
    // OpenRouter's `usage: {include: true}` asks for the same last chunk.
    includeUsage: b.stream_options?.include_usage || b.usage?.include || undefined,
    logprobs: b.logprobs ?? undefined,
    topLogprobs: b.top_logprobs ?? undefined,
    user: b.user ?? undefined,
    responseFormat: chatResponseFormat(b.response_format),
  });
  return { request, reasoningContentCompat: b.reasoning_content_compat ?? false };
}

function addMessage(conversation: ConversationBuilder, message: ChatMessage): void {
  switch (message.role) {
    case 'system':
    case 'developer': // the newer name OpenAI gives system instructions
      conversation.addSystem(joinedText(message.content));
      return;
    case 'user':
      conversation.addUser(
        typeof message.content === 'string'
          ? [{ type: 'text', text: message.content }]
          : message.content.map((part): ContentPart => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image', url: part.image_url.url })),
      );
      return;
    case 'assistant':
      conversation.addAssistant(assistantContent(message), (message.tool_calls ?? []).map(toolCall));
      return;
    case 'tool':
      conversation.addToolResult(message.tool_call_id, joinedText(message.content));
      return;
  }
}

/** System and tool content: a string, or text parts concatenated as the model would read them. */
function joinedText(content: string | { text: string }[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/**
 * Assistant history: earlier reasoning (OpenRouter's `reasoning`, DeepSeek's `reasoning_content`)
 * is kept as a thinking part ahead of the text, the way the model produced it.
 */
function assistantContent(message: Extract<ChatMessage, { role: 'assistant' }>): ContentPart[] {
  const parts: ContentPart[] = [];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (reasoning) parts.push({ type: 'thinking', text: reasoning });
  const content = message.content;
  if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'text', text: content });
  } else if (content) {
    // A refusal in history is just what the assistant said.
    for (const part of content) parts.push({ type: 'text', text: part.type === 'refusal' ? part.refusal : part.text });
  }
  return parts;
}

function toolCall(call: { id: string; function: { name: string; arguments: string } }): ToolCall {
  return { id: call.id, name: call.function.name, arguments: call.function.arguments };
}

/** `{name, description?, parameters?, strict?}` as both OpenAI formats spell a function tool. */
export function functionDefinition(fn: FunctionDefinition): ToolDefinition {
  const definition: ToolDefinition = {
    name: fn.name,
    // OpenAI lets `parameters` be omitted for a function without arguments.
    parameters: fn.parameters ?? { type: 'object', properties: {} },
  };
  if (fn.description !== undefined && fn.description !== null) definition.description = fn.description;
  if (fn.strict !== undefined && fn.strict !== null) definition.strict = fn.strict;
  return definition;
}

function toolChoice(value: ChatCompletionRequest['tool_choice']): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : { name: value.function.name };
}

/**
 * Chat clients ask for reasoning three ways: Anthropic-style `thinking`, OpenRouter-style
 * `reasoning` and OpenAI's `reasoning_effort`. An explicit `reasoning.enabled` wins over the rest.
 */
function reasoningSignals(b: ChatCompletionRequest): ReasoningSignals {
  const signals: ReasoningSignals = effortSignals(b.reasoning_effort);
  if (b.thinking) {
    signals.enabled = b.thinking.type !== 'disabled';
    signals.budgetTokens = b.thinking.budget_tokens ?? undefined;
  }
  const reasoning = b.reasoning;
  if (reasoning) {
    signals.exclude = reasoning.exclude ?? undefined;
    if (reasoning.max_tokens !== undefined && reasoning.max_tokens !== null) {
      signals.budgetTokens = reasoning.max_tokens;
      signals.enabled = true;
    }
    Object.assign(signals, effortSignals(reasoning.effort));
    if (reasoning.enabled !== undefined && reasoning.enabled !== null) signals.enabled = reasoning.enabled;
  }
  return signals;
}
