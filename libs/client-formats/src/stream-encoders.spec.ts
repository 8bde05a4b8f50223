import type { CanonicalStreamEvent } from '@gateway/canonical';
import type { TextFormat } from '@gateway/contracts';
import type { RenderContext } from './common/render-common';
import { clientFormat } from './registry';
import { context, encodeAll, eventsFor, parseFrames, response } from './testing/spec-fixtures';

const createStreamEncoder = (format: TextFormat, ctx: RenderContext) => clientFormat(format).createStreamEncoder(ctx);

const start: CanonicalStreamEvent = { type: 'start', id: 'id1', model: 'test-model', created: 1 };
const usage: CanonicalStreamEvent = { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } };

describe('chat stream encoder', () => {
  it('opens with a role chunk and ends with finish, usage and [DONE]', () => {
    const encoder = createStreamEncoder('chat', context({}, { includeUsage: true }));
    const frames = parseFrames(encodeAll(encoder, [start, { type: 'text_delta', text: 'Hi' }, { type: 'finish', stopReason: 'stop' }, usage]));
    expect(frames.map((f) => f.event)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(frames[0].data.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(frames[1].data.choices[0].delta).toEqual({ content: 'Hi' });
    expect(frames[2].data.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(frames[3].data).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(frames[4].data).toBe('[DONE]');
  });

  it('writes each chunk as OpenAI does, byte for byte: envelope, choices, then usage: null with include_usage', () => {
    for (const includeUsage of [false, true]) {
      const encoder = createStreamEncoder('chat', context({}, { includeUsage }));
      const logprobs = [{ token: 'Hi', logprob: -0.5, topLogprobs: [] }];
      const texts = encodeAll(encoder, [
        start,
        { type: 'text_delta', text: 'Hi "there"\n' },
        { type: 'text_delta', text: 'Hi', logprobs },
        { type: 'finish', stopReason: 'length' },
      ]);
      const envelope = { id: 'id1', object: 'chat.completion.chunk', created: 1, model: 'test-model' };
      const chunk = (delta: object, finish: string | null, lp: unknown = null) =>
        `data: ${JSON.stringify({ ...envelope, choices: [{ index: 0, delta, logprobs: lp, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) })}\n\n`;
      const [role, text, withLogprobs, finish] = texts;
      expect(role).toBe(chunk({ role: 'assistant', content: '' }, null));
      expect(text).toBe(chunk({ content: 'Hi "there"\n' }, null));
      expect(withLogprobs).toBe(
        chunk({ content: 'Hi' }, null, { content: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] }], refusal: null }),
      );
      expect(finish).toBe(chunk({}, 'length'));
    }
  });

  it("ends with the usage chunk when asked for in OpenRouter's spelling, usage: {include: true}", () => {
    const { request } = clientFormat('chat').parse(
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, usage: { include: true } },
      { reasoningExcludeSuffix: false },
    );
    const frames = parseFrames(encodeAll(createStreamEncoder('chat', context({}, request)), [start, { type: 'finish', stopReason: 'stop' }, usage]));
    expect(frames.at(-2)!.data).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(frames.at(-1)!.data).toBe('[DONE]');
  });

  it('sends no usage chunk unless include_usage was asked for', () => {
    const frames = parseFrames(encodeAll(createStreamEncoder('chat', context()), [start, { type: 'finish', stopReason: 'stop' }, usage]));
    expect(frames.some((f) => f.data !== '[DONE]' && f.data.usage)).toBe(false);
    expect(frames[frames.length - 1].data).toBe('[DONE]');
  });

  it('streams reasoning (with reasoning_content in compat mode) and drops it when excluded', () => {
    const reasoning: CanonicalStreamEvent = { type: 'reasoning_delta', text: 'hmm' };
    const compat = parseFrames(createStreamEncoder('chat', context({ reasoningContentCompat: true })).encode(reasoning));
    expect(compat[1].data.choices[0].delta).toEqual({ reasoning: 'hmm', reasoning_content: 'hmm' });
    const excluded = createStreamEncoder('chat', context({ excludeReasoning: true }));
    excluded.encode(start);
    expect(excluded.encode(reasoning)).toEqual([]);
  });

  it('numbers tool calls densely from 0 whatever the canonical indexes', () => {
    const encoder = createStreamEncoder('chat', context());
    encoder.encode(start);
    const frames = parseFrames([
      ...encoder.encode({ type: 'tool_call_start', index: 3, id: 'c', name: 'f' }),
      ...encoder.encode({ type: 'tool_call_delta', index: 3, argumentsDelta: '{}' }),
    ]);
    expect(frames[0].data.choices[0].delta.tool_calls).toEqual([{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '' } }]);
    expect(frames[1].data.choices[0].delta.tool_calls).toEqual([{ index: 0, function: { arguments: '{}' } }]);
  });

  it('still produces a valid stream when the upstream sent no start or finish', () => {
    const frames = parseFrames(encodeAll(createStreamEncoder('chat', context()), [{ type: 'text_delta', text: 'x' }]));
    expect(frames[0].data.model).toBe('test-model');
    expect(frames[0].data.choices[0].delta.role).toBe('assistant');
    expect(frames[frames.length - 2].data.choices[0].finish_reason).toBe('stop');
  });

  it('writes nothing after finish()', () => {
    const encoder = createStreamEncoder('chat', context());
    encodeAll(encoder, [start]);
    expect(encoder.encode({ type: 'text_delta', text: 'late' })).toEqual([]);
    expect(encoder.finish()).toEqual([]);
  });
});

describe('responses stream encoder', () => {
  it('names every event in both the event line and the type field, numbered in order', () => {
    const frames = parseFrames(
      encodeAll(
        createStreamEncoder('responses', context({ reasoningSummary: 'auto' })),
        eventsFor(response({ reasoning: 'r', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }], stopReason: 'tool_calls' })),
      ),
    );
    for (const [i, frame] of frames.entries()) {
      expect(frame.data.type).toBe(frame.event);
      expect(frame.data.sequence_number).toBe(i);
    }
    expect(frames.map((f) => f.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(4).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('streams a reasoning item without summary events, and with summary: [], when no summary was asked for', () => {
    const frames = parseFrames(encodeAll(createStreamEncoder('responses', context()), eventsFor(response({ reasoning: 'Long thoughts.' }))));
    expect(frames.filter((f) => f.event?.startsWith('response.reasoning_summary'))).toEqual([]);
    const reasoning = frames.filter((f) => f.event?.startsWith('response.output_item.') && f.data.item.type === 'reasoning');
    expect(reasoning.map((f) => [f.event, f.data.item.summary])).toEqual([
      ['response.output_item.added', []],
      ['response.output_item.done', []],
    ]);
    expect(frames.at(-1)!.data.response.output[0]).toEqual({ id: 'rs_abc123', type: 'reasoning', summary: [] });
  });

  it('seals the whole reasoning and its signature into the done item and the final response when encrypted content is asked for', () => {
    // A stand-in seal that shows what it was given; the router's is AES-256-GCM.
    const reasoningSeal = { seal: (part: object) => JSON.stringify(part) };
    const events = eventsFor(response({ reasoning: 'Long thoughts.', reasoningSignature: 'sig-1' }));
    const frames = parseFrames(encodeAll(createStreamEncoder('responses', context({ reasoningSeal })), events));
    const sealed = JSON.stringify({ type: 'thinking', text: 'Long thoughts.', signature: 'sig-1' });
    const reasoning = frames.filter((f) => f.event?.startsWith('response.output_item.') && f.data.item.type === 'reasoning');
    expect(reasoning.map((f) => [f.event, f.data.item.encrypted_content])).toEqual([
      ['response.output_item.added', undefined],
      ['response.output_item.done', sealed],
    ]);
    expect(frames.at(-1)!.data.response.output[0]).toEqual({ id: 'rs_abc123', type: 'reasoning', summary: [], encrypted_content: sealed });
    const whole = clientFormat('responses').render(response({ reasoning: 'Long thoughts.', reasoningSignature: 'sig-1' }), context({ reasoningSeal })) as any;
    expect(whole.output[0]).toEqual(frames.at(-1)!.data.response.output[0]);
  });

  it('holds response.completed until usage arrives', () => {
    const encoder = createStreamEncoder('responses', context());
    encoder.encode(start);
    encoder.encode({ type: 'text_delta', text: 'x' });
    const onFinish = parseFrames(encoder.encode({ type: 'finish', stopReason: 'stop' }));
    expect(onFinish.map((f) => f.event)).not.toContain('response.completed');
    const onUsage = parseFrames(encoder.encode(usage));
    expect(onUsage.map((f) => f.event)).toEqual(['response.completed']);
    expect(onUsage[0].data.response.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
    expect(encoder.finish()).toEqual([]);
  });

  it('completes without usage when finish() comes first', () => {
    const encoder = createStreamEncoder('responses', context());
    encoder.encode(start);
    encoder.encode({ type: 'finish', stopReason: 'stop' });
    const frames = parseFrames(encoder.finish());
    expect(frames[0].data.response).toMatchObject({ status: 'completed', usage: null });
  });

  it('ends a length-limited stream with response.incomplete', () => {
    const frames = parseFrames(encodeAll(createStreamEncoder('responses', context()), eventsFor(response({ stopReason: 'length' }))));
    const last = frames[frames.length - 1];
    expect(last.event).toBe('response.incomplete');
    expect(last.data.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('numbers its error event after the events already sent', () => {
    const encoder = createStreamEncoder('responses', context());
    encoder.encode(start);
    const [frame] = parseFrames(encoder.error({ status: 502, message: 'boom' }));
    expect(frame).toEqual({ event: 'error', data: { type: 'error', code: 'server_error', message: 'boom', param: null, sequence_number: 2 } });
  });
});

describe('messages stream encoder', () => {
  it('sends message_start and ping, then blocks, then message_delta and message_stop', () => {
    const frames = parseFrames(
      encodeAll(createStreamEncoder('messages', context()), [start, { type: 'text_delta', text: 'Hi' }, { type: 'finish', stopReason: 'stop' }, usage]),
    );
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const frame of frames) expect(frame.data.type).toBe(frame.event);
    expect(frames[0].data.message).toEqual({
      id: 'msg_id1',
      type: 'message',
      role: 'assistant',
      model: 'test-model',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(frames[5].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 3, output_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
  });

  it("puts the start's input usage in message_start, cache reads and writes apart from input_tokens (as Anthropic counts them)", () => {
    const started = { ...start, usage: { inputTokens: 2345, outputTokens: 1, cachedInputTokens: 2000, cacheWriteTokens: 300 } };
    const frames = parseFrames(
      encodeAll(createStreamEncoder('messages', context()), [started, { type: 'text_delta', text: 'Hi' }, { type: 'finish', stopReason: 'stop' }]),
    );
    expect(frames[0].data.message.usage).toEqual({ input_tokens: 45, output_tokens: 1, cache_read_input_tokens: 2000, cache_creation_input_tokens: 300 });
  });

  it('holds message_delta until usage arrives, or until finish()', () => {
    const encoder = createStreamEncoder('messages', context());
    encoder.encode(start);
    const onFinish = parseFrames(encoder.encode({ type: 'finish', stopReason: 'length' }));
    expect(onFinish.map((f) => f.event)).not.toContain('message_delta');
    const atEnd = parseFrames(encoder.finish());
    expect(atEnd.map((f) => f.event)).toEqual(['message_delta', 'message_stop']);
    expect(atEnd[0].data.delta.stop_reason).toBe('max_tokens');
  });

  it('streams thinking with its signature and tool input as partial JSON', () => {
    const encoder = createStreamEncoder('messages', context());
    const frames = parseFrames([
      ...encoder.encode(start),
      ...encoder.encode({ type: 'reasoning_delta', text: 'hmm' }),
      ...encoder.encode({ type: 'reasoning_signature', signature: 'sig' }),
      ...encoder.encode({ type: 'tool_call_start', index: 0, id: 'toolu_1', name: 'f' }),
      ...encoder.encode({ type: 'tool_call_delta', index: 0, argumentsDelta: '{"a":' }),
    ]).slice(2);
    expect(frames.map((f) => f.data)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
    ]);
  });

  it('keeps each signed thinking block apart, a signature-only one included (Anthropic display omitted and updates)', () => {
    const encoder = createStreamEncoder('messages', context());
    const frames = parseFrames([
      ...encoder.encode(start),
      // Hidden reasoning: a block with only its signature, then a progress note in a block of its own.
      ...encoder.encode({ type: 'reasoning_signature', signature: 'sig-reasoning' }),
      ...encoder.encode({ type: 'reasoning_delta', text: 'Checking the tests.' }),
      ...encoder.encode({ type: 'reasoning_signature', signature: 'sig-update' }),
      ...encoder.encode({ type: 'text_delta', text: 'Done.' }),
    ]).slice(2);
    expect(frames.map((f) => f.data)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-reasoning' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'Checking the tests.' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'sig-update' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Done.' } },
    ]);
  });

  it('sends neither thinking nor signature when reasoning is excluded', () => {
    const encoder = createStreamEncoder('messages', context({ excludeReasoning: true }));
    encoder.encode(start);
    expect(encoder.encode({ type: 'reasoning_delta', text: 'hmm' })).toEqual([]);
    expect(encoder.encode({ type: 'reasoning_signature', signature: 'sig' })).toEqual([]);
  });
});

describe('streamErrorFrame', () => {
  it('writes an OpenAI error object as chat data', () => {
    expect(parseFrames([clientFormat('chat').streamErrorFrame({ status: 429, message: 'slow down' })])).toEqual([
      { event: undefined, data: { error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null } } },
    ]);
  });

  it('writes a responses error event', () => {
    expect(parseFrames([clientFormat('responses').streamErrorFrame({ status: 500, message: 'boom' }, undefined, 7)])).toEqual([
      { event: 'error', data: { type: 'error', code: 'server_error', message: 'boom', param: null, sequence_number: 7 } },
    ]);
  });

  it('writes an Anthropic error event (a 503 is an api_error: overloaded_error is for 529 only)', () => {
    expect(parseFrames([clientFormat('messages').streamErrorFrame({ status: 503, message: 'busy' })])).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'busy' } } },
    ]);
  });
});

describe('in-stream errors and the request id', () => {
  it('a 5xx error event carries the request id in every format, a 4xx one does not', () => {
    const last = (format: 'chat' | 'responses' | 'messages', status: number) => {
      const encoder = createStreamEncoder(format, context());
      encoder.encode(start);
      return parseFrames(encoder.error({ status, message: 'The upstream provider failed mid-stream' }, 'req_42')).at(-1)!.data;
    };
    expect(last('chat', 502)).toMatchObject({ error: { type: 'server_error' }, request_id: 'req_42' });
    expect(last('responses', 502)).toMatchObject({ type: 'error', code: 'server_error', request_id: 'req_42' });
    expect(last('messages', 502)).toMatchObject({ type: 'error', error: { type: 'api_error' }, request_id: 'req_42' });
    for (const format of ['chat', 'responses', 'messages'] as const) expect(last(format, 429)).not.toHaveProperty('request_id');
  });
});
