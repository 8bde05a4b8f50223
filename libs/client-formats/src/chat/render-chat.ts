/** Canonical response → a chat completion (`openai` v6 `ChatCompletion`), the non-streaming reply. */
import type { CanonicalResponse, ToolCall } from '@gateway/canonical';
import { chatFinishReason, chatUsage, logprobsWithBytes, type RenderContext, visibleReasoning } from '../common/render-common';

export function renderChat(response: CanonicalResponse, context: RenderContext): object {
  return {
    id: response.id,
    object: 'chat.completion',
    created: response.created,
    model: response.model,
    choices: [
      {
        index: 0,
        message: chatMessage(response, context),
        logprobs: response.logprobs ? { content: logprobsWithBytes(response.logprobs), refusal: null } : null,
        finish_reason: chatFinishReason(response.stopReason),
      },
    ],
    usage: chatUsage(response.usage),
  };
}

function chatMessage(response: CanonicalResponse, context: RenderContext): object {
  const hasToolCalls = response.toolCalls.length > 0;
  const message: Record<string, unknown> = {
    role: 'assistant',
    // OpenAI sends null content on a pure tool-call turn; clients test for it.
    content: hasToolCalls && response.text === '' ? null : response.text,
    refusal: null,
  };
  const reasoning = visibleReasoning(response.reasoning, context);
  if (reasoning !== undefined) {
    message.reasoning = reasoning;
    if (context.reasoningContentCompat) message.reasoning_content = reasoning;
  }
  if (hasToolCalls) message.tool_calls = response.toolCalls.map(chatToolCall);
  return message;
}

function chatToolCall(call: ToolCall): object {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}
