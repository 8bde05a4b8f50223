/**
 * The proof that official clients read our streams: encoder frames go through each SDK's own SSE
 * parser and stream accumulator (no network), and what the SDK assembles must equal what the
 * non-streaming endpoint renders for the same reply.
 */
import { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import { Stream as AnthropicStream } from '@anthropic-ai/sdk/core/streaming';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { APIError as OpenAIAPIError } from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { Stream as OpenAIStream } from 'openai/streaming';
import type { CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { TextFormat } from '@gateway/contracts';
import type { RenderContext } from './common/render-common';
import { clientFormat } from './registry';
import { context, encodeAll, eventsFor, response, sseResponse, without } from './testing/spec-fixtures';

const renderResponse = (format: TextFormat, r: CanonicalResponse, ctx: RenderContext) => clientFormat(format).render(r, ctx);
const createStreamEncoder = (format: TextFormat, ctx: RenderContext) => clientFormat(format).createStreamEncoder(ctx);

const withTools = response({
  text: 'Let me check the weather.',
  reasoning: 'The user wants weather. I should call the tool for both cities.',
  reasoningSignature: 'sig-abc',
  toolCalls: [
    { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
    { id: 'call_2', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
  ],
  stopReason: 'tool_calls',
  usage: { inputTokens: 40, outputTokens: 25, reasoningTokens: 12, cachedInputTokens: 8 },
});

const scenarios: [string, CanonicalResponse][] = [
  ['plain text', response()],
  ['reasoning, text and two tool calls', withTools],
  ['only tool calls', response({ text: '', toolCalls: [{ id: 'call_9', name: 'noop', arguments: '{}' }], stopReason: 'tool_calls' })],
  ['cut off by the token limit', response({ text: 'It was a dark and', stopReason: 'length' })],
  ['stopped by a stop sequence', response({ text: 'one two', stopReason: 'stop_sequence', stopSequence: 'three' })],
  ['empty reply', response({ text: '' })],
];

/** Two tool calls whose argument deltas interleave, as parallel tool calls can arrive. */
const interleaved: CanonicalStreamEvent[] = [
  { type: 'start', id: 'abc123', model: 'test-model', created: 1 },
  { type: 'tool_call_start', index: 0, id: 'call_a', name: 'first' },
  { type: 'tool_call_start', index: 1, id: 'call_b', name: 'second' },
  { type: 'tool_call_delta', index: 0, argumentsDelta: '{"x":' },
  { type: 'tool_call_delta', index: 1, argumentsDelta: '{"y":2}' },
  { type: 'tool_call_delta', index: 0, argumentsDelta: '1}' },
  { type: 'finish', stopReason: 'tool_calls' },
  { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } },
];

function frames(format: 'chat' | 'responses' | 'messages', r: CanonicalResponse, ctx: RenderContext): string[] {
  return encodeAll(createStreamEncoder(format, ctx), eventsFor(r));
}

describe('openai chat completions SDK', () => {
  async function sdkCompletion(frameList: string[]) {
    const chunks: ChatCompletionChunk[] = [];
    const stream = OpenAIStream.fromSSEResponse<ChatCompletionChunk>(sseResponse(frameList), new AbortController());
    const [forRunner, forUs] = stream.tee();
    const runner = ChatCompletionStream.fromReadableStream(forRunner.toReadableStream());
    for await (const chunk of forUs) chunks.push(chunk);
    return { completion: await runner.finalChatCompletion(), chunks };
  }

  it.each(scenarios)('accumulates %s to the non-streaming completion', async (_name, r) => {
    const ctx = context({}, { includeUsage: true });
    const { completion, chunks } = await sdkCompletion(frames('chat', r, ctx));
    const expected = renderResponse('chat', r, ctx) as any;

    // The SDK keeps only the last value of fields it does not know (`reasoning`), so compare that
    // field by concatenating the deltas ourselves.
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as any)?.reasoning ?? '').join('');
    expect(reasoning).toBe(expected.choices[0].message.reasoning ?? '');
    // `parsed` / `parsed_arguments` are added by the SDK's structured-output helpers.
    const message = without(completion.choices[0].message, ['parsed', 'parsed_arguments', 'reasoning']);
    const expectedMessage = without(expected.choices[0].message, ['reasoning']);
    // Streams cannot tell an empty answer from no answer; the SDK reports null content for both.
    if (expectedMessage.content === '') expectedMessage.content = null;

    expect(message).toEqual(expectedMessage);
    expect(completion.choices[0].finish_reason).toBe(expected.choices[0].finish_reason);
    expect(completion.usage).toEqual(expected.usage);
    expect({ id: completion.id, model: completion.model, created: completion.created, object: completion.object }).toEqual({
      id: expected.id,
      model: expected.model,
      created: expected.created,
      object: 'chat.completion',
    });
  });

  it('assembles interleaved tool-call deltas', async () => {
    const { completion } = await sdkCompletion(encodeAll(createStreamEncoder('chat', context()), interleaved));
    expect(completion.choices[0].message.tool_calls!.map((c: any) => [c.id, c.function.arguments])).toEqual([
      ['call_a', '{"x":1}'],
      ['call_b', '{"y":2}'],
    ]);
  });

  it('carries logprobs through the SDK', async () => {
    const r = response({ text: 'Hi', logprobs: [{ token: 'Hi', logprob: -0.1, topLogprobs: [{ token: 'Hi', logprob: -0.1 }] }] });
    const { completion } = await sdkCompletion(frames('chat', r, context()));
    expect(completion.choices[0].logprobs).toEqual((renderResponse('chat', r, context()) as any).choices[0].logprobs);
  });

  it('raises the SDK APIError for an in-stream error frame', async () => {
    const encoder = createStreamEncoder('chat', context());
    const frameList = [...encoder.encode({ type: 'start', id: 'x', model: 'm', created: 1 }), ...encoder.error({ status: 502, message: 'upstream died' })];
    const stream = OpenAIStream.fromSSEResponse<ChatCompletionChunk>(sseResponse(frameList), new AbortController());
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toThrow(OpenAIAPIError);
  });
});

describe('openai responses SDK', () => {
  async function sdkResponse(frameList: string[]) {
    const events: ResponseStreamEvent[] = [];
    const stream = OpenAIStream.fromSSEResponse<ResponseStreamEvent>(sseResponse(frameList), new AbortController());
    const [forRunner, forUs] = stream.tee();
    const runner = ResponseStream.fromReadableStream(forRunner.toReadableStream());
    for await (const event of forUs) events.push(event);
    return { final: await runner.finalResponse(), events };
  }

  const sdkFields = ['parsed', 'parsed_arguments', 'output_parsed', 'output_text'];

  it.each(scenarios)('accumulates %s to the non-streaming response', async (_name, r) => {
    const ctx = context();
    const { final, events } = await sdkResponse(frames('responses', r, ctx));
    const expected = renderResponse('responses', r, ctx);

    expect(without(final, sdkFields)).toEqual(expected);
    expect(final.output_text).toBe(r.text);

    // The terminal event replaces the snapshot wholesale, so also check what the deltas alone built.
    const terminal = events[events.length - 1];
    let snapshot: OpenAIResponse | undefined;
    for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event, snapshot);
    expect(without(snapshot!.output, sdkFields)).toEqual((expected as any).output);
    expect(terminal.type).toBe(r.stopReason === 'length' ? 'response.incomplete' : 'response.completed');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('assembles interleaved tool-call deltas', async () => {
    const { final } = await sdkResponse(encodeAll(createStreamEncoder('responses', context()), interleaved));
    expect(final.output.map((item: any) => [item.call_id, item.arguments])).toEqual([
      ['call_a', '{"x":1}'],
      ['call_b', '{"y":2}'],
    ]);
  });

  it('leaves reasoning out when excluded', async () => {
    const ctx = context({ excludeReasoning: true });
    const { final, events } = await sdkResponse(frames('responses', withTools, ctx));
    expect(final.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(events.some((e) => e.type.startsWith('response.reasoning'))).toBe(false);
  });
});

describe('anthropic messages SDK', () => {
  async function sdkMessage(frameList: string[]) {
    const stream = AnthropicStream.fromSSEResponse<RawMessageStreamEvent>(sseResponse(frameList), new AbortController());
    return MessageStream.fromReadableStream(stream.toReadableStream()).finalMessage();
  }

  it.each(scenarios)('accumulates %s to the non-streaming message', async (_name, r) => {
    const ctx = context();
    const message = await sdkMessage(frames('messages', r, ctx));
    expect(without(message, ['parsed_output'])).toEqual(renderResponse('messages', r, ctx));
  });

  it('assembles interleaved tool-call deltas', async () => {
    const message = await sdkMessage(encodeAll(createStreamEncoder('messages', context()), interleaved));
    expect(message.content.map((b: any) => [b.id, b.input])).toEqual([
      ['call_a', { x: 1 }],
      ['call_b', { y: 2 }],
    ]);
  });

  it('leaves thinking out when excluded', async () => {
    const ctx = context({ excludeReasoning: true });
    const message = await sdkMessage(frames('messages', withTools, ctx));
    expect(message.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(without(message, ['parsed_output'])).toEqual(renderResponse('messages', withTools, ctx));
  });

  it('raises the SDK APIError with the error type for an in-stream error frame', async () => {
    const encoder = createStreamEncoder('messages', context());
    const frameList = [...encoder.encode({ type: 'start', id: 'x', model: 'm', created: 1 }), ...encoder.error({ status: 529, message: 'Overloaded' })];
    const stream = AnthropicStream.fromSSEResponse<RawMessageStreamEvent>(sseResponse(frameList), new AbortController());
    const error = await (async () => {
      try {
        for await (const _ of stream) void _;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(AnthropicAPIError);
    expect((error as any).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });
});
