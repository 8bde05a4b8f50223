import type { TranscriptionRequest, TranscriptionResult, TranscriptionUsage } from '@gateway/canonical';
import { createParser } from 'eventsource-parser';
import { multipartBody, type MultipartPart } from '../multipart-body';
import { asRecord, malformedResponse } from '../upstream-http';

/**
 * The fields of `POST /audio/transcriptions` or `/audio/translations` as OpenAI's SDK sends them,
 * the file streamed from the store; the model is the route's upstream model.
 */
export function toOpenAIAudioParts(request: TranscriptionRequest, upstreamModel: string): MultipartPart[] {
  const parts: MultipartPart[] = [
    { name: 'file', file: request.file },
    { name: 'model', value: upstreamModel },
    { name: 'response_format', value: request.responseFormat },
  ];
  if (request.language !== undefined) parts.push({ name: 'language', value: request.language });
  if (request.prompt !== undefined) parts.push({ name: 'prompt', value: request.prompt });
  if (request.temperature !== undefined) parts.push({ name: 'temperature', value: String(request.temperature) });
  for (const granularity of request.timestampGranularities ?? []) parts.push({ name: 'timestamp_granularities[]', value: granularity });
  if (request.stream) parts.push({ name: 'stream', value: 'true' });
  return parts;
}

export const openAIAudioBody = (request: TranscriptionRequest, upstreamModel: string) => multipartBody(toOpenAIAudioParts(request, upstreamModel));

/** OpenAI's `usage` of a transcription: `{type: "tokens", input_tokens, output_tokens, …}` or `{type: "duration", seconds}`. */
export function transcriptionUsageOf(value: unknown): TranscriptionUsage | undefined {
  const usage = asRecord(value);
  if (!usage) return undefined;
  const { input_tokens: input, output_tokens: output, seconds } = usage;
  if (usage['type'] === 'tokens' && Number.isSafeInteger(input) && Number.isSafeInteger(output) && (input as number) >= 0 && (output as number) >= 0) {
    return { type: 'tokens', inputTokens: input as number, outputTokens: output as number, raw: usage };
  }
  if (usage['type'] === 'duration' && typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0) return { type: 'duration', seconds };
  return undefined;
}

/** The upstream's answer in the format asked: JSON for `json` / `verbose_json` (with its usage), text otherwise. */
export function fromOpenAIAudio(request: TranscriptionRequest, text: string): TranscriptionResult {
  if (request.responseFormat !== 'json' && request.responseFormat !== 'verbose_json') return { body: { kind: 'text', text } };
  let value: Record<string, unknown> | undefined;
  try {
    value = asRecord(JSON.parse(text));
  } catch {
    value = undefined;
  }
  if (!value || typeof value['text'] !== 'string') throw malformedResponse('a transcription without text', text.slice(0, 1000));
  return { body: { kind: 'json', value }, usage: transcriptionUsageOf(value['usage']) };
}

/**
 * A streamed answer's events as they arrive (eventsource-parser over the body's chunks): each
 * event's `data` a JSON object; `[DONE]` is skipped, anything else that is not a JSON object is a
 * malformed answer (502). Whether a `transcript.text.done` came is the caller's to check.
 */
export async function* openAIAudioEvents(chunks: AsyncIterable<Buffer>): AsyncGenerator<Record<string, unknown>> {
  const ready: Record<string, unknown>[] = [];
  let problem: string | undefined;
  const parser = createParser({
    onEvent: (message) => {
      if (message.data === '[DONE]' || problem) return;
      let event: Record<string, unknown> | undefined;
      try {
        event = asRecord(JSON.parse(message.data));
      } catch {
        event = undefined;
      }
      if (event) ready.push(event);
      else problem = message.data.slice(0, 1000);
    },
  });
  const decoder = new TextDecoder();
  const drain = function* (): Generator<Record<string, unknown>> {
    while (ready.length > 0) yield ready.shift()!;
    if (problem !== undefined) throw malformedResponse('a stream event that is not a JSON object', problem);
  };
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* drain();
  }
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
  yield* drain();
}
