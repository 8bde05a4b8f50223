/** Canonical response → an Anthropic `Message` (`@anthropic-ai/sdk`), the non-streaming reply. */
import type { CanonicalResponse, ToolCall } from '@gateway/canonical';
import { messagesStopReason, messagesUsage, prefixedId, type RenderContext, toolInput, visibleReasoning } from '../common/render-common';

export function renderMessages(response: CanonicalResponse, context: RenderContext): object {
  const content: object[] = [];
  // Signed reasoning with no text (Anthropic's for reasoning it does not show) is still a block: the client sends it back.
  const reasoning = visibleReasoning(response.reasoning, context) ?? (context.excludeReasoning || !response.reasoningSignature ? undefined : '');
  if (reasoning !== undefined) content.push(messagesThinkingBlock(reasoning, response.reasoningSignature));
  // Keep a text block on a reply with no tool calls, even an empty one: many clients read content[0].text.
  if (response.text !== '' || response.toolCalls.length === 0) content.push({ type: 'text', text: response.text });
  for (const call of response.toolCalls) content.push(messagesToolUseBlock(call, toolInput(call.arguments)));
  return {
    id: prefixedId('msg_', response.id),
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: messagesStopReason(response.stopReason),
    stop_sequence: response.stopReason === 'stop_sequence' ? (response.stopSequence ?? null) : null,
    usage: messagesUsage(response.usage),
  };
}

/** A thinking block; `signature` is required by the SDK type, so it is '' for non-Anthropic reasoning. */
export function messagesThinkingBlock(thinking: string, signature: string | undefined): object {
  return { type: 'thinking', thinking, signature: signature ?? '' };
}

export function messagesToolUseBlock(call: Pick<ToolCall, 'id' | 'name'>, input: Record<string, unknown>): object {
  return { type: 'tool_use', id: call.id, name: call.name, input };
}
