import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { ProviderAdapter, UpstreamRoute } from '../provider-adapter';
import { UpstreamHttpClient, joinUrl, malformedResponse, type UpstreamHttpOptions } from '../upstream-http';
import { NO_ITEMS } from '../sse-reader';
import { AnthropicStreamMapper, formatToolName, fromAnthropicResponse, toAnthropicRequest, type AnthropicStreamEvent } from './anthropic-mapping';
import { toAnthropicCountRequest } from './anthropic-token-count';
import { inputTokensOf, unlessNotServed } from '../upstream-count';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic Messages API (and compatible servers). */
export class AnthropicAdapter implements ProviderAdapter {
  readonly appliesReasoningDisplay = true;
  private readonly http: UpstreamHttpClient;

  constructor(options?: UpstreamHttpOptions) {
    this.http = new UpstreamHttpClient(options);
  }

  async complete(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<CanonicalResponse> {
    const native = route.structuredOutputs === true;
    const body = toAnthropicRequest(request, route.upstreamModel, false, native);
    const response = await this.http.postJson(messagesUrl(route), anthropicHeaders(route, request), body, signal);
    return fromAnthropicResponse(response, request, formatToolName(request, native));
  }

  stream(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): AsyncIterable<CanonicalStreamEvent> {
    const native = route.structuredOutputs === true;
    const mapper = new AnthropicStreamMapper(request, formatToolName(request, native));
    const body = () => toAnthropicRequest(request, route.upstreamModel, true, native);
    return this.http.streamSse(messagesUrl(route), anthropicHeaders(route, request), body, signal, {
      // After message_stop, read on to the end of the body (ignoring what follows) so the socket goes back to the pool.
      event: (event) => (mapper.done ? NO_ITEMS : mapper.map(parseEvent(event.data))),
      end: () => {
        mapper.end(); // throws if the stream was cut off before message_delta
        return NO_ITEMS;
      },
    });
  }

  /** Anthropic's `POST /v1/messages/count_tokens`; a compatible server without it answers 404 (undefined: the router counts). */
  countInputTokens(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<number | undefined> {
    return unlessNotServed(async () =>
      inputTokensOf(
        await this.http.postJson(
          `${messagesUrl(route)}/count_tokens`,
          anthropicHeaders(route, request),
          toAnthropicCountRequest(request, route.upstreamModel),
          signal,
        ),
      ),
    );
  }

  /** Closes the connection pool (on shutdown). */
  close(): Promise<void> {
    return this.http.close();
  }
}

/** `{baseUrl}/v1/messages`, accepting a base URL that already ends in `/v1`. */
export function messagesUrl(route: UpstreamRoute): string {
  const base = (route.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '');
  return joinUrl(base, base.endsWith('/v1') ? 'messages' : 'v1/messages');
}

/** The client's beta flags go with the body they steer (a display mode behind a beta needs its flag). */
function anthropicHeaders(route: UpstreamRoute, request: CanonicalRequest): Record<string, string> {
  return {
    'anthropic-version': ANTHROPIC_VERSION,
    ...(route.apiKey ? { 'x-api-key': route.apiKey } : {}),
    ...(request.betas?.length ? { 'anthropic-beta': request.betas.join(',') } : {}),
  };
}

function parseEvent(data: string): AnthropicStreamEvent {
  try {
    return JSON.parse(data) as AnthropicStreamEvent;
  } catch {
    throw malformedResponse('a stream event that is not JSON', data.slice(0, 1000));
  }
}
