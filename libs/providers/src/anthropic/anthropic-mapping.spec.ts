import { encode } from 'gpt-tokenizer';
import type { CanonicalStreamEvent } from '@gateway/canonical';
import { canonicalRequest, userText, weatherTool } from '../testing/canonical-fixtures';
import {
  AnthropicStreamMapper,
  fromAnthropicResponse,
  fromAnthropicStopReason,
  toAnthropicRequest,
  toImageSource,
  type AnthropicStreamEvent,
} from './anthropic-mapping';

describe('toAnthropicRequest', () => {
  it('maps the conversation: tool_use, merged tool results, thinking, mid-conversation system, merged turns', () => {
    const request = canonicalRequest({
      system: 'Be brief.',
      messages: [
        userText('Weather in Paris and Oslo?'),
        userText('Quickly please.'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'Two cities.', signature: 'sig-1' },
            { type: 'thinking', text: 'unsigned, from another provider' },
            { type: 'text', text: 'Checking both.' },
          ],
          toolCalls: [
            { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: 'toolu_2', name: 'get_weather', arguments: 'not json' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '18C' },
        { role: 'tool', toolCallId: 'toolu_2', content: 'timeout', isError: true },
        { role: 'system', content: 'Answer in French.' },
        { role: 'assistant', content: [{ type: 'text', text: '' }] },
        {
          role: 'user',
          content: [
            { type: 'image', url: 'data:image/png;base64,iVBO' },
            { type: 'image', url: 'https://example.com/a.jpg' },
          ],
        },
      ],
    });
    const body = toAnthropicRequest(request, 'claude-test', false);
    expect(body.system).toBe('Be brief.');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather in Paris and Oslo?' },
          { type: 'text', text: 'Quickly please.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Two cities.', signature: 'sig-1' },
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'timeout', is_error: true },
          { type: 'text', text: 'System: Answer in French.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
        ],
      },
    ]);
  });

  it('puts tool results first when they merge into a user turn that has text', () => {
    const body = toAnthropicRequest(
      canonicalRequest({
        messages: [
          { role: 'system', content: 'Note.' },
          { role: 'tool', toolCallId: 't1', content: 'ok' },
        ],
      }),
      'm',
      false,
    );
    expect(body.messages[0].content.map((block) => block.type)).toEqual(['tool_result', 'text']);
  });

  it('maps sampling, stop, tools, tool choice and user; defaults max_tokens to 4096', () => {
    const body = toAnthropicRequest(
      canonicalRequest({
        temperature: 0.5,
        topP: 0.9,
        topK: 20,
        stop: ['END'],
        tools: [weatherTool, { name: 'ping', parameters: {} }],
        toolChoice: 'required',
        user: 'u-1',
        stream: true,
      }),
      'claude-test',
      true,
    );
    const { messages, ...rest } = body;
    expect(messages).toHaveLength(1);
    expect(rest).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 20,
      stop_sequences: ['END'],
      tools: [
        { name: 'get_weather', description: 'Current weather for a city', input_schema: weatherTool.parameters },
        { name: 'ping', input_schema: { type: 'object' } },
      ],
      tool_choice: { type: 'any' },
      metadata: { user_id: 'u-1' },
    });
    expect(toAnthropicRequest(canonicalRequest({ toolChoice: 'auto' }), 'm', false).tool_choice).toEqual({ type: 'auto' });
    expect(toAnthropicRequest(canonicalRequest({ toolChoice: 'none' }), 'm', false).tool_choice).toEqual({ type: 'none' });
    expect(toAnthropicRequest(canonicalRequest({ toolChoice: { name: 'ping' } }), 'm', false).tool_choice).toEqual({ type: 'tool', name: 'ping' });
    expect(toAnthropicRequest(canonicalRequest({ maxTokens: 300 }), 'm', false).max_tokens).toBe(300);
  });

  it('enables thinking with a budget below max_tokens, leaving out temperature and top_k', () => {
    const reasoning = { enabled: true, exclude: false };
    expect(toAnthropicRequest(canonicalRequest({ reasoning }), 'm', false)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      max_tokens: 4096,
    });
    expect(toAnthropicRequest(canonicalRequest({ reasoning: { ...reasoning, budgetTokens: 2000 }, maxTokens: 2500 }), 'm', false)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2000 },
      max_tokens: 2500,
    });
    // Without a client limit there is room for the answer on top of a large budget.
    expect(toAnthropicRequest(canonicalRequest({ reasoning: { ...reasoning, budgetTokens: 5000 } }), 'm', false).max_tokens).toBe(9096);
    // A client limit is never exceeded: one the budget fills is refused, naming max_tokens.
    for (const [budgetTokens, maxTokens] of [
      [2000, 1500],
      [undefined, 1024],
      [undefined, 500],
    ]) {
      expect(() => toAnthropicRequest(canonicalRequest({ reasoning: { ...reasoning, budgetTokens }, maxTokens }), 'm', false)).toThrow(
        expect.objectContaining({ status: 400, param: 'max_tokens', message: expect.stringContaining('reasoning tokens count against max_tokens') }),
      );
    }
    expect(toAnthropicRequest(canonicalRequest({ reasoning: { ...reasoning, budgetTokens: 100 } }), 'm', false).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
    const body = toAnthropicRequest(canonicalRequest({ reasoning, temperature: 0.3, topK: 5, topP: 0.95 }), 'm', false);
    expect(body).toMatchObject({ top_p: 0.95 });
    expect(body.temperature).toBeUndefined();
    expect(body.top_k).toBeUndefined();
    expect(toAnthropicRequest(canonicalRequest({ reasoning: { ...reasoning, enabled: false } }), 'm', false).thinking).toBeUndefined();
  });

  it("sends the client's thinking display mode as it came, one it does not know included", () => {
    for (const display of ['omitted', 'updates', 'a-mode-from-2027']) {
      const reasoning = { enabled: true, exclude: false, display };
      expect(toAnthropicRequest(canonicalRequest({ reasoning }), 'm', true).thinking).toEqual({ type: 'enabled', budget_tokens: 1024, display });
    }
    expect(toAnthropicRequest(canonicalRequest({ reasoning: { enabled: true, exclude: false } }), 'm', true).thinking).not.toHaveProperty('display');
  });

  it('maps inline image data', () => {
    expect(toImageSource({ type: 'image', mediaType: 'image/webp', data: 'UklG' })).toEqual({ type: 'base64', media_type: 'image/webp', data: 'UklG' });
  });
});

describe('fromAnthropicResponse', () => {
  const request = canonicalRequest();

  it('maps text, thinking with signature, tool use, stop reason and usage', () => {
    const response = fromAnthropicResponse(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me see.', signature: 'EqQB' },
          { type: 'text', text: 'Checking ' },
          { type: 'text', text: 'now.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 20, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 30 },
      },
      request,
    );
    expect(response).toEqual({
      id: 'msg_1',
      model: 'public-model',
      created: expect.any(Number),
      text: 'Checking now.',
      reasoning: 'Let me see.',
      reasoningSignature: 'EqQB',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      stopReason: 'tool_calls',
      usage: { inputTokens: 150, outputTokens: 40, cachedInputTokens: 100, cacheWriteTokens: 30 },
    });
  });

  it('reports the stop sequence and maps every stop reason', () => {
    const response = fromAnthropicResponse(
      {
        id: 'msg_2',
        content: [{ type: 'text', text: 'one two' }],
        stop_reason: 'stop_sequence',
        stop_sequence: 'three',
        usage: { input_tokens: 3, output_tokens: 2 },
      },
      request,
    );
    expect(response).toMatchObject({ stopReason: 'stop_sequence', stopSequence: 'three' });
    expect(fromAnthropicStopReason('end_turn')).toBe('stop');
    expect(fromAnthropicStopReason('max_tokens')).toBe('length');
    expect(fromAnthropicStopReason('tool_use')).toBe('tool_calls');
    expect(fromAnthropicStopReason('refusal')).toBe('content_filter');
  });

  it('counts tokens when usage is missing, and rejects a body without content', () => {
    expect(fromAnthropicResponse({ id: 'm', content: [{ type: 'text', text: 'Hi there' }], stop_reason: 'end_turn' }, request).usage).toEqual({
      inputTokens: encode('Hello there').length,
      outputTokens: encode('Hi there').length,
    });
    expect(() => fromAnthropicResponse({ type: 'message' }, request)).toThrow(expect.objectContaining({ status: 502, retryable: true }));
  });
});

describe('AnthropicStreamMapper', () => {
  const run = (events: AnthropicStreamEvent[]): CanonicalStreamEvent[] => {
    const mapper = new AnthropicStreamMapper(canonicalRequest());
    const out = events.flatMap((event) => mapper.map(event));
    mapper.end();
    return out;
  };

  it('maps thinking, text and tool use blocks, numbering tools in order', () => {
    const events = run([
      {
        type: 'message_start',
        message: { id: 'msg_s', usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 7 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig==' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'ping' },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'On it.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city": "Paris"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_b', name: 'ping', input: {} } },
      { type: 'content_block_stop', index: 3 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 60 } },
      { type: 'message_stop' },
    ]);
    expect(events).toEqual([
      // The whole input, reported at the start: a stream cut short is billed it.
      {
        type: 'start',
        id: 'msg_s',
        model: 'public-model',
        created: expect.any(Number),
        usage: { inputTokens: 37, outputTokens: 1, cachedInputTokens: 5, cacheWriteTokens: 7 },
      },
      { type: 'reasoning_delta', text: 'Hmm.' },
      { type: 'reasoning_signature', signature: 'sig==' },
      { type: 'text_delta', text: 'On it.' },
      { type: 'tool_call_start', index: 0, id: 'toolu_a', name: 'get_weather' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"city": "Paris"}' },
      { type: 'tool_call_start', index: 1, id: 'toolu_b', name: 'ping' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{}' },
      { type: 'finish', stopReason: 'tool_calls' },
      { type: 'usage', usage: { inputTokens: 37, outputTokens: 60, cachedInputTokens: 5, cacheWriteTokens: 7 } },
    ]);
  });

  it('reports the stop sequence and prefers input usage repeated in message_delta', () => {
    const events = run([
      { type: 'message_start', message: { id: 'm', usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } },
      { type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: '###' }, usage: { input_tokens: 12, output_tokens: 3 } },
    ]);
    expect(events.slice(1)).toEqual([
      { type: 'text_delta', text: 'Hi' },
      { type: 'finish', stopReason: 'stop_sequence', stopSequence: '###' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3 } },
    ]);
  });

  it('throws an UpstreamError for an error event, and when the stream is cut off', () => {
    const mapper = new AnthropicStreamMapper(canonicalRequest());
    expect(() => mapper.map({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })).toThrow(
      expect.objectContaining({ status: 529, retryable: true, message: 'Overloaded' }),
    );
    expect(() => mapper.map({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } })).toThrow(
      expect.objectContaining({ status: 400, retryable: false }),
    );
    expect(() => mapper.end()).toThrow(expect.objectContaining({ status: 502, retryable: true }));
  });
});
