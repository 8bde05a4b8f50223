import type { CanonicalRequest } from '@gateway/canonical';
import { toAnthropicRequest, type AnthropicMessagesRequest } from './anthropic-mapping';

/**
 * The body of Anthropic's `POST /v1/messages/count_tokens`: the prompt-shaping fields of a Messages
 * request only (it refuses generation settings such as `max_tokens` or `stream`).
 */
export function toAnthropicCountRequest(request: CanonicalRequest, upstreamModel: string): Partial<AnthropicMessagesRequest> {
  // Without a client limit, no max_tokens-versus-thinking-budget check can refuse the count.
  const { model, messages, system, tools, tool_choice, thinking } = toAnthropicRequest({ ...request, maxTokens: undefined }, upstreamModel, false);
  return {
    model,
    messages,
    ...(system !== undefined ? { system } : {}),
    ...(tools ? { tools } : {}),
    ...(tool_choice ? { tool_choice } : {}),
    ...(thinking ? { thinking } : {}),
  };
}
