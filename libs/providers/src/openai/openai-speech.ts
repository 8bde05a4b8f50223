import type { SpeechCall, SpeechEvent, SpeechStream } from '@gateway/canonical';
import { SPEECH_CONTENT_TYPES, type SpeechResponseFormat } from '@gateway/contracts';
import type { EventSourceMessage } from 'eventsource-parser';
import { asRecord, malformedResponse, type UpstreamHttpClient } from '../upstream-http';

/** `POST /audio/speech`: the client's fields as it sent them (`speed`, `instructions`, `stream_format` only when set). */
export function toOpenAISpeechBody(call: SpeechCall, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, input: call.input, voice: call.voice, response_format: call.format };
  if (call.instructions !== undefined) body.instructions = call.instructions;
  if (call.speedSet) body.speed = call.speed;
  if (call.streamFormat !== undefined) body.stream_format = call.streamFormat;
  return body;
}

/** One upstream SSE event as audio or usage; other events (and `[DONE]`) say nothing. */
function fromSpeechEvent(event: EventSourceMessage): SpeechEvent | undefined {
  if (event.data.trim() === '[DONE]') return undefined;
  let data: Record<string, unknown> | undefined;
  try {
    data = asRecord(JSON.parse(event.data));
  } catch {
    throw malformedResponse('a speech event that is not JSON', event.data.slice(0, 1000));
  }
  const type = data?.['type'] ?? event.event;
  if (type === 'speech.audio.delta') {
    const audio = data?.['audio'];
    if (typeof audio !== 'string') throw malformedResponse('a speech.audio.delta event without audio', data);
    return { kind: 'audio', bytes: Buffer.from(audio, 'base64') };
  }
  if (type === 'speech.audio.done') {
    const usage = asRecord(data?.['usage']);
    const input = usage?.['input_tokens'];
    const output = usage?.['output_tokens'];
    if (Number.isSafeInteger(input) || Number.isSafeInteger(output)) {
      return {
        kind: 'usage',
        inputTokens: Number.isSafeInteger(input) ? (input as number) : 0,
        outputTokens: Number.isSafeInteger(output) ? (output as number) : 0,
      };
    }
  }
  return undefined;
}

/**
 * OpenAI's speech: with `stream_format: sse` the upstream's events are read (audio deltas, and the
 * usage of `speech.audio.done`); otherwise its body is the audio, passed on chunk by chunk as it
 * arrives, never held whole. Failures before the audio starts are thrown before this resolves.
 */
export async function openAISpeech(
  http: UpstreamHttpClient,
  url: string,
  headers: Record<string, string>,
  call: SpeechCall,
  upstreamModel: string,
  signal: AbortSignal,
): Promise<SpeechStream> {
  const body = toOpenAISpeechBody(call, upstreamModel);
  const contentType = SPEECH_CONTENT_TYPES[call.format as SpeechResponseFormat] ?? 'application/octet-stream';
  if (call.streamFormat === 'sse') {
    const events = http.postSse(url, headers, body, signal);
    // The request goes out on the first read: read it here so that a refusal is thrown now.
    const first = await events.next();
    async function* audio(): AsyncGenerator<SpeechEvent> {
      if (first.done) return;
      const head = fromSpeechEvent(first.value);
      if (head) yield head;
      for await (const event of events) {
        const mapped = fromSpeechEvent(event);
        if (mapped) yield mapped;
      }
    }
    return { contentType, events: audio() };
  }
  const response = await http.postStreamed(url, headers, body, signal);
  async function* audio(): AsyncGenerator<SpeechEvent> {
    for await (const bytes of response.body) if (bytes.length > 0) yield { kind: 'audio', bytes };
  }
  return { contentType: response.contentType?.startsWith('audio/') ? response.contentType : contentType, events: audio() };
}
