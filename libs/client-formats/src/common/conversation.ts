import type { CanonicalMessage, ContentPart, ToolCall } from '@gateway/canonical';

/**
 * Collects canonical messages while a client conversation is parsed.
 *
 * It owns the two rules every format shares: system text that comes before any other message is
 * the leading system prompt (joined with blank lines), later system text is a mid-conversation
 * `system` message; and formats whose history is a flat item list (responses) can fold reasoning,
 * text and tool calls of one assistant turn into a single assistant message.
 */
export class ConversationBuilder {
  private readonly systemParts: string[] = [];
  private readonly list: CanonicalMessage[] = [];
  /** Images returned by tools: canonical tool results are text, so they follow as a user message. */
  private pendingAttachments: ContentPart[] = [];

  /** The conversation so far, with any pending tool attachments placed after the tool results. */
  get messages(): CanonicalMessage[] {
    this.flushAttachments();
    return this.list;
  }

  /** Leading system prompt, or undefined when the client sent none. */
  get system(): string | undefined {
    return this.systemParts.length > 0 ? this.systemParts.join('\n\n') : undefined;
  }

  addSystem(text: string): void {
    if (this.messages.length === 0) this.systemParts.push(text);
    else this.list.push({ role: 'system', content: text });
  }

  /** A system message in the conversation, never folded into the leading prompt. */
  addMidConversationSystem(text: string): void {
    this.messages.push({ role: 'system', content: text });
  }

  addUser(content: ContentPart[]): void {
    // Tool attachments waiting to be placed join this user turn rather than forming their own.
    const attachments = this.pendingAttachments;
    this.pendingAttachments = [];
    this.list.push({ role: 'user', content: [...attachments, ...content] });
  }

  /** A new assistant turn, kept separate from any assistant message before it. */
  addAssistant(content: ContentPart[], toolCalls: ToolCall[] = []): void {
    this.messages.push(assistantMessage(content, toolCalls));
  }

  /**
   * Adds to the assistant turn in progress: the responses format sends a reasoning item, a message
   * item and function_call items as separate siblings of one turn.
   */
  appendToAssistant(content: ContentPart[], toolCalls: ToolCall[] = []): void {
    const last = this.messages[this.messages.length - 1];
    if (last?.role !== 'assistant') {
      this.addAssistant(content, toolCalls);
      return;
    }
    last.content.push(...content);
    if (toolCalls.length > 0) last.toolCalls = [...(last.toolCalls ?? []), ...toolCalls];
  }

  /**
   * A tool result. `attachments` (images a tool returned) are held back until the run of tool
   * results ends, because providers require every result to directly follow the tool calls.
   */
  addToolResult(toolCallId: string, content: string, isError?: boolean, attachments: ContentPart[] = []): void {
    this.list.push(isError ? { role: 'tool', toolCallId, content, isError } : { role: 'tool', toolCallId, content });
    this.pendingAttachments.push(...attachments);
  }

  private flushAttachments(): void {
    if (this.pendingAttachments.length === 0) return;
    this.list.push({ role: 'user', content: this.pendingAttachments });
    this.pendingAttachments = [];
  }
}

function assistantMessage(content: ContentPart[], toolCalls: ToolCall[]): CanonicalMessage {
  return toolCalls.length > 0 ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
}
