/**
 * Fixtures and helpers for the client-format specs (not used by production code; no jest globals,
 * so the app build can compile it like any other file).
 */
import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { RenderContext } from '../common/render-common';
import type { StreamEncoder } from '../common/stream-encoder';

export const baseRequest: CanonicalRequest = {
  model: 'test-model',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  stream: true,
};

export function context(overrides: Partial<RenderContext> = {}, request: Partial<CanonicalRequest> = {}): RenderContext {
  return { request: { ...baseRequest, ...request }, excludeReasoning: false, ...overrides };
}

export function response(overrides: Partial<CanonicalResponse> = {}): CanonicalResponse {
  return {
    id: 'abc123',
    model: 'test-model',
    created: 1_700_000_000,
    text: 'Hello there, friend.',
    toolCalls: [],
    stopReason: 'stop',
    usage: { inputTokens: 12, outputTokens: 7 },
    ...overrides,
  };
}

/** Splits text into pieces of `size` characters, as an upstream would stream it. */
function pieces(text: string, size = 5): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The canonical events an adapter would yield for `r`: start, deltas, finish, usage. */
export function eventsFor(r: CanonicalResponse): CanonicalStreamEvent[] {
  const events: CanonicalStreamEvent[] = [{ type: 'start', id: r.id, model: r.model, created: r.created }];
  for (const text of pieces(r.reasoning ?? '')) events.push({ type: 'reasoning_delta', text });
  if (r.reasoningSignature) events.push({ type: 'reasoning_signature', signature: r.reasoningSignature });
  pieces(r.text).forEach((text, i) => {
    // Logprobs, when present, ride along on the first text delta.
    const logprobs = i === 0 ? r.logprobs : undefined;
    events.push(logprobs ? { type: 'text_delta', text, logprobs } : { type: 'text_delta', text });
  });
  r.toolCalls.forEach((call, index) => {
    events.push({ type: 'tool_call_start', index, id: call.id, name: call.name });
    for (const argumentsDelta of pieces(call.arguments, 7)) events.push({ type: 'tool_call_delta', index, argumentsDelta });
  });
  events.push({ type: 'finish', stopReason: r.stopReason, ...(r.stopSequence ? { stopSequence: r.stopSequence } : {}) });
  events.push({ type: 'usage', usage: r.usage });
  return events;
}

/** Every frame an encoder writes for `events`, finish() included. */
export function encodeAll(encoder: StreamEncoder, events: CanonicalStreamEvent[]): string[] {
  return [...events.flatMap((e) => encoder.encode(e)), ...encoder.finish()];
}

/**
 * A fetch `Response` streaming `frames`, re-cut into chunks of `chunkSize` bytes so SDK parsers
 * also see frames split across network reads.
 */
export function sseResponse(frames: string[], chunkSize = 37): Response {
  const bytes = new TextEncoder().encode(frames.join(''));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += chunkSize) controller.enqueue(bytes.slice(i, i + chunkSize));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/** Parses frames back into `{event, data}` pairs for direct assertions. */
export function parseFrames(frames: string[]): { event?: string; data: any }[] {
  return frames.map((frame) => {
    if (!frame.endsWith('\n\n')) throw new Error(`frame does not end with a blank line: ${JSON.stringify(frame)}`);
    const lines = frame.trimEnd().split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length);
    const dataLine = lines.find((l) => l.startsWith('data: '));
    const raw = dataLine ? dataLine.slice('data: '.length) : '';
    return { event, data: raw === '[DONE]' ? raw : JSON.parse(raw) };
  });
}

/** A deep copy without the given keys anywhere (SDK-added fields such as `parsed`). */
export function without(value: unknown, keys: string[]): any {
  return JSON.parse(JSON.stringify(value, (k, v) => (keys.includes(k) ? undefined : v)));
}
