import type { CanonicalResponse } from '@gateway/canonical';
import type { TextFormat } from '@gateway/contracts';
import type { RenderContext } from './common/render-common';
import { clientFormat } from './registry';
import { context, response } from './testing/spec-fixtures';

const renderResponse = (format: TextFormat, r: CanonicalResponse, ctx: RenderContext) => clientFormat(format).render(r, ctx);

const full = response({
  id: 'gen-1',
  text: 'Here you go.',
  reasoning: 'Thinking...',
  reasoningSignature: 'sig',
  toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
  stopReason: 'tool_calls',
  usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 5, cachedInputTokens: 4 },
});

describe('renderResponse: chat', () => {
  it('renders a completion with reasoning and tool calls', () => {
    expect(renderResponse('chat', full, context())).toEqual({
      id: 'gen-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Here you go.',
            refusal: null,
            reasoning: 'Thinking...',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 20,
        total_tokens: 30,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    });
  });

  it('sends null content on a tool-call-only turn and reasoning_content with compat', () => {
    const body = renderResponse('chat', { ...full, text: '' }, context({ reasoningContentCompat: true })) as any;
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.reasoning_content).toBe('Thinking...');
  });

  it('omits reasoning when excluded', () => {
    const message = (renderResponse('chat', full, context({ excludeReasoning: true, reasoningContentCompat: true })) as any).choices[0].message;
    expect(message).not.toHaveProperty('reasoning');
    expect(message).not.toHaveProperty('reasoning_content');
  });

  it('renders logprobs with bytes', () => {
    const body = renderResponse('chat', response({ logprobs: [{ token: 'é', logprob: -0.5, topLogprobs: [{ token: 'e', logprob: -1 }] }] }), context()) as any;
    expect(body.choices[0].logprobs).toEqual({
      content: [{ token: 'é', logprob: -0.5, bytes: [195, 169], top_logprobs: [{ token: 'e', logprob: -1, bytes: [101] }] }],
      refusal: null,
    });
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['stop_sequence', 'stop'],
    ['content_filter', 'content_filter'],
  ] as const)('maps stop reason %s to %s', (reason, expected) => {
    expect((renderResponse('chat', response({ stopReason: reason }), context()) as any).choices[0].finish_reason).toBe(expected);
  });
});

describe('renderResponse: responses', () => {
  it('renders reasoning, message and function call items with the request echoed', () => {
    const ctx = context(
      { metadata: { trace: 't' }, reasoningSummary: 'auto' },
      {
        system: 'Be brief.',
        maxTokens: 99,
        temperature: 0.3,
        topP: 0.8,
        toolChoice: { name: 'f' },
        tools: [{ name: 'f', parameters: { type: 'object' } }],
        reasoning: { enabled: true, effort: 'low', exclude: false },
      },
    );
    expect(renderResponse('responses', full, ctx)).toEqual({
      id: 'resp_gen-1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: 99,
      model: 'test-model',
      output: [
        { id: 'rs_gen-1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking...' }] },
        { id: 'msg_gen-1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Here you go.', annotations: [] }] },
        { id: 'fc_gen-1_0', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: 'low', summary: 'auto' },
      store: false,
      temperature: 0.3,
      text: { format: { type: 'text' } },
      tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', description: null, parameters: { type: 'object' }, strict: true }],
      top_p: 0.8,
      truncation: 'disabled',
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 30,
      },
      user: null,
      metadata: { trace: 't' },
    });
  });

  it('marks a length stop incomplete and leaves out excluded reasoning and empty messages', () => {
    const body = renderResponse('responses', { ...full, text: '', stopReason: 'length' }, context({ excludeReasoning: true })) as any;
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(body.output.map((item: any) => item.type)).toEqual(['function_call']);
  });

  it('returns the reasoning item with summary: [] when no summary was asked for, as OpenAI does', () => {
    const body = renderResponse('responses', full, context()) as any;
    expect(body.output[0]).toEqual({ id: 'rs_gen-1', type: 'reasoning', summary: [] });
    expect(body.reasoning).toEqual({ effort: null, summary: null });
    expect(body.usage.output_tokens_details).toEqual({ reasoning_tokens: 5 });
  });

  it("echoes each tool's strict as sent, true (OpenAI's default on Responses) when it was left out", () => {
    const tools = [
      { name: 'sent_true', parameters: {}, strict: true },
      { name: 'sent_false', parameters: {}, strict: false },
      { name: 'left_out', parameters: {} },
    ];
    const body = renderResponse('responses', response(), context({}, { tools })) as any;
    expect(body.tools.map((tool: any) => [tool.name, tool.strict])).toEqual([
      ['sent_true', true],
      ['sent_false', false],
      ['left_out', true],
    ]);
  });

  it('keeps a resp_ id as is', () => {
    expect((renderResponse('responses', response({ id: 'resp_x' }), context()) as any).id).toBe('resp_x');
  });
});

describe('renderResponse: messages', () => {
  it('renders thinking, text and tool_use blocks', () => {
    expect(renderResponse('messages', full, context())).toEqual({
      id: 'msg_gen-1',
      type: 'message',
      role: 'assistant',
      model: 'test-model',
      content: [
        { type: 'thinking', thinking: 'Thinking...', signature: 'sig' },
        { type: 'text', text: 'Here you go.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      // 4 of the 10 input tokens were cache reads: Anthropic counts them apart from input_tokens.
      usage: { input_tokens: 6, output_tokens: 20, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
    });
  });

  it('keeps signed reasoning that has no text as an empty thinking block, for the client to send back', () => {
    const body = renderResponse('messages', response({ reasoning: '', reasoningSignature: 'sig' }), context()) as any;
    expect(body.content[0]).toEqual({ type: 'thinking', thinking: '', signature: 'sig' });
  });

  it('drops excluded thinking and an empty text block next to tool calls', () => {
    const body = renderResponse('messages', { ...full, text: '' }, context({ excludeReasoning: true })) as any;
    expect(body.content.map((b: any) => b.type)).toEqual(['tool_use']);
  });

  it('reports the stop sequence', () => {
    const body = renderResponse('messages', response({ stopReason: 'stop_sequence', stopSequence: '###' }), context()) as any;
    expect([body.stop_reason, body.stop_sequence]).toEqual(['stop_sequence', '###']);
  });

  it('turns unparseable tool arguments into an empty input object', () => {
    const body = renderResponse('messages', response({ toolCalls: [{ id: 't', name: 'f', arguments: '{"a":' }], stopReason: 'length' }), context()) as any;
    expect(body.content[1]).toEqual({ type: 'tool_use', id: 't', name: 'f', input: {} });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['stop_sequence', 'stop_sequence'],
    ['content_filter', 'refusal'],
  ] as const)('maps stop reason %s to %s', (reason, expected) => {
    expect((renderResponse('messages', response({ stopReason: reason }), context()) as any).stop_reason).toBe(expected);
  });
});
