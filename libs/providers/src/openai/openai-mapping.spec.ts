import { encode } from 'gpt-tokenizer';
import type { CanonicalRequest, CanonicalStreamEvent } from '@gateway/canonical';
import { UpstreamError } from '../provider-adapter';
import { canonicalRequest, userText, weatherTool } from '../testing/canonical-fixtures';
import { fromOpenAIFinishReason, fromOpenAIResponse, OpenAIStreamMapper, toOpenAIRequest, type OpenAIChatChunk } from './openai-mapping';

describe('toOpenAIRequest', () => {
  it('maps the conversation: leading and mid-conversation system, user parts, assistant tool calls, tool results', () => {
    const request = canonicalRequest({
      system: 'Be brief.',
      messages: [
        userText('What is the weather in Paris?'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'hmm', signature: 's' },
            { type: 'text', text: 'Checking.' },
          ],
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: '18C, sunny' },
        { role: 'tool', toolCallId: 'call_2', content: 'timeout', isError: true },
        { role: 'system', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And this?' },
            { type: 'image', url: 'https://example.com/cat.png' },
            { type: 'image', mediaType: 'image/jpeg', data: 'AAAA' },
          ],
        },
        { role: 'assistant', content: [], toolCalls: [{ id: 'call_3', name: 'get_weather', arguments: '{}' }] },
      ],
    });
    expect(toOpenAIRequest(request, 'gpt-4o-mini', false).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C, sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: timeout' },
      { role: 'system', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'And this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
    ]);
  });

  it('maps sampling, tools, tool choice, logprobs, reasoning effort and user; drops top_k', () => {
    const request = canonicalRequest({
      maxTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      frequencyPenalty: 0.1,
      presencePenalty: 0.3,
      stop: ['END'],
      tools: [weatherTool],
      toolChoice: { name: 'get_weather' },
      logprobs: true,
      topLogprobs: 3,
      reasoning: { enabled: true, effort: 'high', exclude: false },
      user: 'u-1',
    });
    const { messages, ...rest } = toOpenAIRequest(request, 'gpt-4o-mini', false);
    expect(messages).toHaveLength(1);
    expect(rest).toEqual({
      model: 'gpt-4o-mini',
      stream: false,
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      frequency_penalty: 0.1,
      presence_penalty: 0.3,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: weatherTool.parameters } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      logprobs: true,
      top_logprobs: 3,
      reasoning_effort: 'high',
      user: 'u-1',
    });
  });

  it('passes string tool choices through and leaves out reasoning_effort without an effort', () => {
    for (const toolChoice of ['auto', 'none', 'required'] as const) {
      expect(toOpenAIRequest(canonicalRequest({ toolChoice }), 'm', false).tool_choice).toBe(toolChoice);
    }
    const body = toOpenAIRequest(canonicalRequest({ reasoning: { enabled: true, budgetTokens: 2000, exclude: false } }), 'm', false);
    expect(body.reasoning_effort).toBeUndefined();
    expect(toOpenAIRequest(canonicalRequest({ reasoning: { enabled: false, effort: 'low', exclude: false } }), 'm', false).reasoning_effort).toBeUndefined();
  });

  it("sends a tool's strict as the client said, and nothing when it said nothing", () => {
    const tools = [
      { ...weatherTool, strict: true },
      { ...weatherTool, name: 'lenient', strict: false },
      { ...weatherTool, name: 'unsaid' },
    ];
    const sent = toOpenAIRequest(canonicalRequest({ tools }), 'm', false).tools?.map((tool) => tool.function);
    expect(sent?.map((fn) => fn.strict)).toEqual([true, false, undefined]);
    expect(sent?.[2]).not.toHaveProperty('strict');
  });

  it('always asks for usage when streaming, never otherwise', () => {
    expect(toOpenAIRequest(canonicalRequest({ includeUsage: false }), 'm', true)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(toOpenAIRequest(canonicalRequest(), 'm', false).stream_options).toBeUndefined();
  });
});

describe('fromOpenAIResponse', () => {
  const request = canonicalRequest({ system: 'Be brief.' });

  it('maps content, reasoning, tool calls, finish reason, usage and logprobs', () => {
    const response = fromOpenAIResponse(
      {
        id: 'chatcmpl-1',
        created: 1700000000,
        model: 'gpt-4o-mini-2024',
        choices: [
          {
            message: {
              role: 'assistant',
              content: 'Hi!',
              reasoning_content: 'think',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
            logprobs: {
              content: [
                {
                  token: 'Hi',
                  logprob: -0.1,
                  top_logprobs: [
                    { token: 'Hi', logprob: -0.1 },
                    { token: 'Hello', logprob: -2 },
                  ],
                },
                { token: '!', logprob: -0.5, top_logprobs: [] },
              ],
            },
          },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 20 }, prompt_tokens_details: { cached_tokens: 8 } },
      },
      request,
    );
    expect(response).toEqual({
      id: 'chatcmpl-1',
      model: 'public-model',
      created: 1700000000,
      text: 'Hi!',
      reasoning: 'think',
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
      stopReason: 'tool_calls',
      usage: { inputTokens: 12, outputTokens: 30, reasoningTokens: 20, cachedInputTokens: 8 },
      logprobs: [
        {
          token: 'Hi',
          logprob: -0.1,
          topLogprobs: [
            { token: 'Hi', logprob: -0.1 },
            { token: 'Hello', logprob: -2 },
          ],
        },
        { token: '!', logprob: -0.5 },
      ],
    });
  });

  it('prefers message.reasoning and maps the finish reasons', () => {
    const response = fromOpenAIResponse(
      {
        choices: [{ message: { content: null, reasoning: 'r1', reasoning_content: 'r2' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      },
      request,
    );
    expect(response).toMatchObject({ text: '', reasoning: 'r1', stopReason: 'length' });
    expect(fromOpenAIFinishReason('stop', false)).toBe('stop');
    expect(fromOpenAIFinishReason('content_filter', false)).toBe('content_filter');
    expect(fromOpenAIFinishReason('function_call', false)).toBe('tool_calls');
    expect(fromOpenAIFinishReason('stop', true)).toBe('tool_calls');
    expect(fromOpenAIFinishReason(null, false)).toBe('stop');
  });

  it('counts tokens with gpt-tokenizer when the upstream omits usage', () => {
    const response = fromOpenAIResponse({ choices: [{ message: { content: 'Nice to meet you.' }, finish_reason: 'stop' }] }, request);
    expect(response.usage).toEqual({
      inputTokens: encode('Be brief.').length + encode('Hello there').length,
      outputTokens: encode('Nice to meet you.').length,
    });
  });

  it('reports a body without choices as a retryable 502', () => {
    expect(() => fromOpenAIResponse({ object: 'chat.completion' }, request)).toThrow(expect.objectContaining({ status: 502, retryable: true }));
    expect(() => fromOpenAIResponse('nope', request)).toThrow(UpstreamError);
  });
});

describe('OpenAIStreamMapper', () => {
  const chunk = (choice: Record<string, unknown> | null, extra: Partial<OpenAIChatChunk> = {}): OpenAIChatChunk =>
    ({ id: 'chatcmpl-9', created: 1700000001, choices: choice ? [{ index: 0, delta: {}, finish_reason: null, ...choice }] : [], ...extra }) as OpenAIChatChunk;

  function run(request: CanonicalRequest, chunks: OpenAIChatChunk[]): CanonicalStreamEvent[] {
    const mapper = new OpenAIStreamMapper(request);
    return [...chunks.flatMap((c) => mapper.map(c)), ...mapper.end()];
  }

  it('maps text, reasoning, tool calls, finish and usage in order', () => {
    const events = run(canonicalRequest(), [
      chunk({ delta: { role: 'assistant', content: '' } }),
      chunk({ delta: { reasoning: 'Let me ' } }),
      chunk({ delta: { reasoning_content: 'think.' } }),
      chunk({ delta: { content: 'Sure' }, logprobs: { content: [{ token: 'Sure', logprob: -0.2, top_logprobs: [] }] } }),
      chunk({ delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] } }),
      chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }),
      chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] } }),
      chunk({ delta: { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'other', arguments: '{}' } }] } }),
      chunk({ delta: {}, finish_reason: 'tool_calls' }),
      chunk(null, { usage: { prompt_tokens: 10, completion_tokens: 5 } }),
    ]);
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-9', model: 'public-model', created: 1700000001 },
      { type: 'reasoning_delta', text: 'Let me ' },
      { type: 'reasoning_delta', text: 'think.' },
      { type: 'text_delta', text: 'Sure', logprobs: [{ token: 'Sure', logprob: -0.2 }] },
      { type: 'tool_call_start', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool_call_start', index: 1, id: 'call_b', name: 'other' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{}' },
      { type: 'finish', stopReason: 'tool_calls' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
  });

  it('numbers whole tool calls sent without an index', () => {
    const events = run(canonicalRequest(), [
      chunk({ delta: { tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{"x":1}' } }] } }),
      chunk({ delta: { tool_calls: [{ id: 'b', function: { name: 'g', arguments: '{}' } }] }, finish_reason: 'stop' }),
    ]);
    expect(events.filter((event) => event.type.startsWith('tool_call') || event.type === 'finish')).toEqual([
      { type: 'tool_call_start', index: 0, id: 'a', name: 'f' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"x":1}' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'g' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{}' },
      { type: 'finish', stopReason: 'tool_calls' },
    ]);
  });

  it('counts usage itself when no usage chunk came', () => {
    const events = run(canonicalRequest(), [chunk({ delta: { content: 'Hello ' } }), chunk({ delta: { content: 'world' }, finish_reason: 'stop' })]);
    expect(events.at(-1)).toEqual({ type: 'usage', usage: { inputTokens: encode('Hello there').length, outputTokens: encode('Hello world').length } });
  });

  it('fails a stream that ends without a finish reason, and in-stream errors', () => {
    const mapper = new OpenAIStreamMapper(canonicalRequest());
    mapper.map(chunk({ delta: { content: 'Hel' } }));
    expect(() => mapper.end()).toThrow(expect.objectContaining({ status: 502, retryable: true }));
    expect(() => mapper.map({ error: { message: 'Rate limited', code: 429 } })).toThrow(
      expect.objectContaining({ status: 429, retryable: true, message: 'Rate limited' }),
    );
    expect(() => mapper.map({ error: { message: 'bad', code: 400 } })).toThrow(expect.objectContaining({ status: 400, retryable: false }));
  });
});
