import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { ProviderAdapter, UpstreamRoute } from '../../provider-adapter';
import { countPromptTokens, countTokens } from '../../token-count';

/** The last user message's text: what the echo provider says back. */
function lastUserText(request: CanonicalRequest): string {
  const last = request.messages.findLast((message) => message.role === 'user');
  return last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
}

/**
 * The contributor guide's example provider: it answers every request with the last user message.
 * A real provider does the same two things over HTTP — map the canonical request to its wire
 * format and its reply back — and rejects with an `UpstreamError` when the upstream fails.
 */
export class EchoAdapter implements ProviderAdapter {
  readonly needsBaseUrl = false;

  async complete(route: UpstreamRoute, request: CanonicalRequest): Promise<CanonicalResponse> {
    const text = lastUserText(request);
    return {
      id: `echo-${route.upstreamModel}`,
      model: request.model,
      created: Math.floor(Date.now() / 1000),
      text,
      toolCalls: [],
      stopReason: 'stop',
      usage: { inputTokens: countPromptTokens(request), outputTokens: countTokens(text) },
    };
  }

  async *stream(route: UpstreamRoute, request: CanonicalRequest): AsyncIterable<CanonicalStreamEvent> {
    const reply = await this.complete(route, request);
    yield { type: 'start', id: reply.id, model: reply.model, created: reply.created };
    yield { type: 'text_delta', text: reply.text };
    yield { type: 'finish', stopReason: reply.stopReason };
    yield { type: 'usage', usage: reply.usage };
  }
}
