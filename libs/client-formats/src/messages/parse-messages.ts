/**
 * Anthropic Messages request body → canonical request. `MessagesRequest` (messages.schema.ts)
 * checks the body; what is left here is what a schema cannot say.
 */
import type { CanonicalRequest, ContentPart, ImagePart, ToolCall, ToolChoice, ToolDefinition } from '@gateway/canonical';
import { DomainError, ErrorCode } from '@gateway/errors';
import { ConversationBuilder } from '../common/conversation';
import { messagesOutputFormat } from '../common/response-format';
import { buildReasoning, compact, foldEffort, type Effort, type ParsedClientRequest, type ParseOptions, type ReasoningSignals } from '../common/parse-common';
import { compileRequestValidator } from '../common/schema';
import { type AssistantBlock, type DocumentBlock, type ImageBlock, MessagesRequest, type UserBlock } from './messages.schema';

const validate = compileRequestValidator(MessagesRequest);

export function parseMessagesRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = validate(body);
  const conversation = new ConversationBuilder();
  if (b.system !== undefined && b.system !== null) conversation.addSystem(texts(b.system));
  if (b.messages[0].role === 'system') {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      'messages.0: a system role may not be the first message; use the top-level system field',
      'messages.0.role',
    );
  }
  for (const message of b.messages) {
    if (message.role === 'assistant') addAssistant(conversation, message.content);
    else addUserOrSystem(conversation, message.role, message.content);
  }

  const request: CanonicalRequest = compact({
    model: b.model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: b.max_tokens ?? undefined,
    temperature: b.temperature ?? undefined,
    // Anthropic documents 0 as "not set" for both.
    topP: b.top_p || undefined,
    topK: b.top_k || undefined,
    stop: b.stop_sequences ?? undefined,
    tools: b.tools?.flatMap(tool),
    toolChoice: toolChoice(b.tool_choice),
    reasoning: buildReasoning(reasoningSignals(b), options),
    stream: b.stream ?? false,
    user: b.metadata?.user_id ?? undefined,
    responseFormat: messagesOutputFormat(b.output_config?.format, b.output_format),
    betas: betas(options.betas, b.betas),
  });
  return { request, reasoningContentCompat: false };
}

/** A string, or text blocks joined with blank lines. */
function texts(value: string | { text: string }[]): string {
  return typeof value === 'string' ? value : value.map((block) => block.text).join('\n\n');
}

/**
 * A user (or mid-conversation system) turn. Blocks are taken in order: `tool_result` blocks become
 * canonical tool messages, `mid_conv_system` blocks system messages, and the rest the turn's
 * user (or system) content between them.
 */
function addUserOrSystem(conversation: ConversationBuilder, role: 'user' | 'system', content: string | UserBlock[]): void {
  if (typeof content === 'string') {
    if (role === 'system') conversation.addMidConversationSystem(content);
    else conversation.addUser([{ type: 'text', text: content }]);
    return;
  }
  let pending: ContentPart[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    if (role === 'system') conversation.addMidConversationSystem(pending.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n'));
    else conversation.addUser(pending);
    pending = [];
  };
  for (const block of content) {
    switch (block.type) {
      case 'tool_result': {
        flush();
        addToolResult(conversation, block);
        break;
      }
      case 'mid_conv_system':
        flush();
        conversation.addMidConversationSystem(texts(block.content));
        break;
      case 'tool_addition':
      case 'tool_removal':
        break; // tool-list edits the router cannot forward; accepted so such clients keep working
      case 'image':
        pending.push(imagePart(block));
        break;
      case 'document':
        pending.push({ type: 'text', text: documentText(block) });
        break;
      default:
        pending.push({ type: 'text', text: block.text });
    }
  }
  flush();
}

function imagePart(block: ImageBlock): ImagePart {
  const source = block.source;
  if (source.type === 'url') return { type: 'image', url: source.url };
  return { type: 'image', mediaType: source.media_type, data: source.data };
}

function documentText(block: DocumentBlock): string {
  const source = block.source;
  return source.type === 'text' ? source.data : texts(source.content);
}

/** `tool_result` content is a string or text/image blocks; images follow as user content. */
function addToolResult(conversation: ConversationBuilder, block: Extract<UserBlock, { type: 'tool_result' }>): void {
  const isError = block.is_error ?? undefined;
  const content = block.content;
  if (content === undefined || content === null || typeof content === 'string') {
    conversation.addToolResult(block.tool_use_id, content ?? '', isError);
    return;
  }
  const text: string[] = [];
  const images: ContentPart[] = [];
  for (const b of content) {
    if (b.type === 'image') images.push(imagePart(b));
    else text.push(b.type === 'document' ? documentText(b) : b.text);
  }
  conversation.addToolResult(block.tool_use_id, text.join('\n\n'), isError, images);
}

function addAssistant(conversation: ConversationBuilder, content: string | AssistantBlock[]): void {
  if (typeof content === 'string') {
    conversation.addAssistant(content === '' ? [] : [{ type: 'text', text: content }]);
    return;
  }
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking') {
      parts.push(block.signature ? { type: 'thinking', text: block.thinking, signature: block.signature } : { type: 'thinking', text: block.thinking });
    } else if (block.type === 'tool_use') {
      // Canonical arguments are JSON text, as OpenAI sends them.
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
    // `redacted_thinking` (only Anthropic can read it) and server-tool blocks carry nothing another model could use.
  }
  conversation.addAssistant(parts, toolCalls);
}

/** Custom tools become canonical tools; server tools (a versioned `type`, no `input_schema`) are skipped. */
function tool(value: NonNullable<MessagesRequest['tools']>[number]): ToolDefinition[] {
  if (value.type !== undefined && value.type !== null && value.type !== 'custom' && value.input_schema === undefined) return [];
  const definition: ToolDefinition = { name: value.name, parameters: value.input_schema };
  if (value.description !== undefined && value.description !== null) definition.description = value.description;
  return [definition];
}

function toolChoice(choice: MessagesRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { name: choice.name };
  return choice.type;
}

/** The header's flags and the body's, once each, in the order sent; undefined when there are none. */
function betas(header: string[] | undefined, body: string[] | null | undefined): string[] | undefined {
  const all = [...new Set([...(header ?? []), ...(body ?? [])])];
  return all.length > 0 ? all : undefined;
}

/**
 * `thinking`: enabled (budget required) or adaptive turn reasoning on, disabled off. `display` is
 * kept as sent (Anthropic upstreams get it); `omitted` means think but do not return it.
 * `output_config.effort` refines enabled thinking.
 */
function reasoningSignals(b: MessagesRequest): ReasoningSignals {
  const thinking = b.thinking;
  if (!thinking) return {};
  if (thinking.type === 'disabled') return { enabled: false };
  const level = b.output_config?.effort;
  const folded = level === undefined || level === null ? undefined : foldEffort(level);
  const effort: Effort | undefined = folded === 'none' ? undefined : folded;
  const signals: ReasoningSignals = { enabled: true, budgetTokens: thinking.budget_tokens ?? undefined, effort };
  if (thinking.display !== undefined && thinking.display !== null) {
    signals.display = thinking.display;
    signals.exclude = thinking.display === 'omitted';
  }
  return signals;
}
