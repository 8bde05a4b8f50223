import type { TextFormat } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import type { ParseOptions } from './common/parse-common';
import { clientFormat } from './registry';

const parseClientRequest = (format: TextFormat, body: unknown, options: ParseOptions) => clientFormat(format).parse(body, options);

const opts = { reasoningExcludeSuffix: false };

/** The validation error a body raises, or fails the test when it parses. */
function rejection(format: 'chat' | 'responses' | 'messages', body: unknown): DomainError {
  try {
    parseClientRequest(format, body, opts);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected the body to be rejected');
}

describe('parseClientRequest: chat', () => {
  const chat = (body: Record<string, unknown>, options = opts) =>
    parseClientRequest('chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }, options);

  it('parses a minimal request', () => {
    expect(chat({})).toEqual({
      request: { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false },
      reasoningContentCompat: false,
    });
  });

  it('joins leading system and developer messages; later ones stay in place', () => {
    const { request } = chat({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Be kind.' }] },
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'Now be loud.' },
      ],
    });
    expect(request.system).toBe('Be brief.\n\nBe kind.');
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'system', content: 'Now be loud.' },
    ]);
  });

  it('parses images, tool calls, tool results and assistant reasoning', () => {
    const { request } = chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'high' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Look it up.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"y"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
        { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
      ],
    });
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: 'https://x/y.png' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'thinking', text: 'Look it up.' }],
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"y"}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'a cat' },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
    ]);
  });

  it('maps sampling, tools and streaming options', () => {
    const { request } = chat({
      max_completion_tokens: 100,
      temperature: 1.5,
      top_p: 0.9,
      top_k: 40,
      frequency_penalty: -1,
      presence_penalty: 2,
      stop: 'END',
      tools: [
        { type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'g' } },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      stream: true,
      stream_options: { include_usage: true },
      logprobs: true,
      top_logprobs: 3,
      user: 'u-1',
      web_search: false,
      unknown_field: { anything: 1 },
    });
    expect(request).toMatchObject({
      maxTokens: 100,
      temperature: 1.5,
      topP: 0.9,
      topK: 40,
      frequencyPenalty: -1,
      presencePenalty: 2,
      stop: ['END'],
      tools: [
        { name: 'f', description: 'does f', parameters: { type: 'object' } },
        { name: 'g', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { name: 'f' },
      stream: true,
      includeUsage: true,
      logprobs: true,
      topLogprobs: 3,
      user: 'u-1',
    });
    expect(chat({ max_tokens: 5 }).request.maxTokens).toBe(5);
    expect(chat({ tool_choice: 'required' }).request.toolChoice).toBe('required');
  });

  describe('reasoning', () => {
    it('is left unset when the body says nothing', () => {
      expect(chat({}).request.reasoning).toBeUndefined();
    });

    it('reads thinking, reasoning and reasoning_effort', () => {
      expect(chat({ thinking: { type: 'enabled', budget_tokens: 2048 } }).request.reasoning).toEqual({ enabled: true, budgetTokens: 2048, exclude: false });
      expect(chat({ reasoning: { effort: 'high' } }).request.reasoning).toEqual({ enabled: true, effort: 'high', exclude: false });
      expect(chat({ reasoning: { enabled: true, exclude: true } }).request.reasoning).toEqual({ enabled: true, exclude: true });
      expect(chat({ reasoning: { exclude: true } }).request.reasoning).toEqual({ enabled: false, exclude: true });
      expect(chat({ reasoning_effort: 'minimal' }).request.reasoning).toEqual({ enabled: true, effort: 'low', exclude: false });
      expect(chat({ reasoning_effort: 'none' }).request.reasoning).toEqual({ enabled: false, exclude: false });
    });

    it('excludes reasoning for the :reasoning-exclude suffix without changing enablement', () => {
      expect(chat({}, { reasoningExcludeSuffix: true }).request.reasoning).toEqual({ enabled: false, exclude: true });
      expect(chat({ reasoning: { effort: 'low' } }, { reasoningExcludeSuffix: true }).request.reasoning).toEqual({
        enabled: true,
        effort: 'low',
        exclude: true,
      });
    });

    it('returns reasoning_content_compat beside the request', () => {
      expect(chat({ reasoning_content_compat: true }).reasoningContentCompat).toBe(true);
    });
  });

  it.each([
    [{ model: 5 }, 'model', 'model: must be a string, got a number'],
    [{ model: undefined }, 'model', 'model: is required'],
    [{ messages: [] }, 'messages', 'messages: must not be empty'],
    [
      { messages: [{ role: 'robot', content: 'x' }] },
      'messages.0.role',
      "messages.0.role: must be one of 'system', 'developer', 'user', 'assistant', 'tool', got 'robot'",
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'messages.0.content.0.type', undefined],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.tool_call_id', 'messages.0.tool_call_id: is required'],
    [
      { messages: [{ role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f', arguments: {} } }] }] },
      'messages.0.tool_calls.0.function.arguments',
      undefined,
    ],
    [{ temperature: 3 }, 'temperature', 'temperature: must be at most 2, got 3'],
    [{ top_p: '1' }, 'top_p', 'top_p: must be a number, got a string'],
    [{ max_tokens: 0 }, 'max_tokens', 'max_tokens: must be at least 1, got 0'],
    [{ max_completion_tokens: 1.5 }, 'max_completion_tokens', 'max_completion_tokens: must be an integer, got 1.5'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'stop: must have at most 4 items, got 5'],
    [{ stop: [1] }, 'stop.0', undefined],
    [{ tools: [{ type: 'function', function: {} }] }, 'tools.0.function.name', 'tools.0.function.name: is required'],
    [{ tool_choice: 'sometimes' }, 'tool_choice', undefined],
    [{ stream: 'yes' }, 'stream', 'stream: must be a boolean, got a string'],
    [{ stream_options: { include_usage: 1 } }, 'stream_options.include_usage', undefined],
    [{ usage: { include: 'yes' } }, 'usage.include', 'usage.include: must be a boolean, got a string'],
    [{ top_logprobs: 21 }, 'top_logprobs', undefined],
    [{ thinking: { type: 'enabled', budget_tokens: 'lots' } }, 'thinking.budget_tokens', undefined],
    [{ reasoning: { effort: 7 } }, 'reasoning.effort', 'reasoning.effort: must be a string, got a number'],
    [{ reasoning_content_compat: 'on' }, 'reasoning_content_compat', undefined],
  ])('rejects %j at %s', (body, param, message) => {
    const error = rejection('chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body });
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: `)).toBe(true);
    if (message) expect(error.message).toBe(message);
  });

  it('rejects a body that is not an object', () => {
    expect(rejection('chat', [1]).message).toBe('request body must be a JSON object, got an array');
  });
});

describe('parseClientRequest: responses', () => {
  const responses = (body: Record<string, unknown>, options: ParseOptions = opts) =>
    parseClientRequest('responses', { model: 'm', input: 'hi', ...body }, options);

  it('turns string input into one user message and instructions into the system prompt', () => {
    expect(responses({ instructions: 'Be brief.' }).request).toEqual({
      model: 'm',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stream: false,
    });
  });

  it('folds an item list into canonical turns', () => {
    const { request } = responses({
      input: [
        { role: 'developer', content: 'Use tools.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAA' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Call the tool.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
        { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        {
          type: 'function_call_output',
          call_id: 'c2',
          output: [
            { type: 'input_text', text: 'noon' },
            { type: 'input_image', image_url: 'https://x/clock.png' },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(request.system).toBe('Use tools.');
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', url: 'data:image/png;base64,AAA' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'Call the tool.' },
          { type: 'text', text: 'Checking.' },
        ],
        toolCalls: [
          { id: 'c1', name: 'weather', arguments: '{}' },
          { id: 'c2', name: 'time', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'c1', content: 'sunny' },
      { role: 'tool', toolCallId: 'c2', content: 'noon' },
      // The tool's image cannot ride in a text tool result: it joins the next user turn.
      {
        role: 'user',
        content: [
          { type: 'image', url: 'https://x/clock.png' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('accepts both tool shapes and both function tool_choice shapes', () => {
    const { request } = responses({
      tools: [
        { type: 'function', name: 'flat', description: 'd', parameters: { type: 'object' }, strict: true },
        { type: 'function', function: { name: 'nested', parameters: { type: 'object' } } },
        { type: 'web_search_preview' },
      ],
      tool_choice: { type: 'function', name: 'flat' },
    });
    expect(request.tools).toEqual([
      { name: 'flat', description: 'd', parameters: { type: 'object' }, strict: true },
      { name: 'nested', parameters: { type: 'object' } },
    ]);
    expect(request.toolChoice).toEqual({ name: 'flat' });
    expect(responses({ tool_choice: { type: 'function', function: { name: 'x' } } }).request.toolChoice).toEqual({ name: 'x' });
  });

  it('maps limits, reasoning, metadata and logprobs', () => {
    const parsed = responses({
      max_output_tokens: 200,
      temperature: 0.2,
      top_p: 0.5,
      stream: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      metadata: { trace: 't-1' },
      include: ['message.output_text.logprobs'],
      web_search: false,
    });
    expect(parsed.request).toMatchObject({
      maxTokens: 200,
      temperature: 0.2,
      topP: 0.5,
      stream: true,
      reasoning: { enabled: true, effort: 'medium', exclude: false },
      logprobs: true,
    });
    expect(parsed.metadata).toEqual({ trace: 't-1' });
    expect(parsed.reasoningSummary).toBe('auto');
    expect(responses({ reasoning: { effort: 'low' } }).reasoningSummary).toBeUndefined();
    expect(responses({ reasoning: { summary: true } }).reasoningSummary).toBe('auto');
    expect(responses({ reasoning: { summary: false } }).request.reasoning).toEqual({ enabled: true, exclude: true });
    expect(responses({}, { reasoningExcludeSuffix: true }).request.reasoning).toEqual({ enabled: false, exclude: true });
  });

  it('restores a reasoning item from its encrypted_content, which wins over its summary, and asks for sealing with include', () => {
    // A stand-in seal that opens only what it recognises; the router's is AES-256-GCM bound to the account.
    const reasoningSeal = {
      seal: () => 'unused',
      unseal: (content: string, param: string) => {
        if (content !== 'sealed-1') throw new DomainError(ErrorCode.InvalidRequest, `${param}: cannot be opened`, param);
        return { type: 'thinking' as const, text: 'All of it.', signature: 'sig-1' };
      },
    };
    const input = (encrypted: string) => [
      { role: 'user', content: 'Hi' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Some.' }], encrypted_content: encrypted },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] },
      { role: 'user', content: 'Again' },
    ];
    const parsed = responses({ input: input('sealed-1'), include: ['reasoning.encrypted_content'] }, { ...opts, reasoningSeal });
    expect(parsed.request.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'All of it.', signature: 'sig-1' },
        { type: 'text', text: 'Hello.' },
      ],
    });
    expect(parsed.encryptedReasoning).toBe(true);
    expect(responses({ input: input('sealed-1') }).encryptedReasoning).toBeUndefined();
    expect(() => responses({ input: input('forged') }, { ...opts, reasoningSeal })).toThrow(
      expect.objectContaining({ status: 400, param: 'input.1.encrypted_content' }),
    );
  });

  it.each([
    [{ input: undefined }, 'input'],
    [{ input: 5 }, 'input'],
    [{ input: [] }, 'input'],
    [{ input: [{ role: 'user' }] }, 'input.0.content'],
    [{ input: [{ role: 'bot', content: 'x' }] }, 'input.0.role'],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input.0.content.0.type'],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }, 'input.0.content.0.image_url'],
    [{ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.0.call_id'],
    [{ input: [{ type: 'item_reference', id: 'x' }] }, 'input.0.type'],
    [{ input: [{ role: 'system', content: 'only a system message' }] }, 'input'],
    [{ instructions: 7 }, 'instructions'],
    [{ max_output_tokens: -1 }, 'max_output_tokens'],
    [{ tools: [{ type: 'function' }] }, 'tools.0.name'],
    [{ tool_choice: { type: 'function' } }, 'tool_choice.name'],
    [{ reasoning: { effort: 7 } }, 'reasoning.effort'],
    [{ reasoning: { summary: 1 } }, 'reasoning.summary'],
    [{ metadata: { n: 1 } }, 'metadata.n'],
    [{ previous_response_id: 7 }, 'previous_response_id'],
    [{ store: 'yes' }, 'store'],
  ])('rejects %j at %s', (body, param) => {
    const error = rejection('responses', { model: 'm', input: 'hi', ...body });
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: `)).toBe(true);
  });
});

describe('parseClientRequest: messages', () => {
  const messages = (body: Record<string, unknown>, options = opts) =>
    parseClientRequest('messages', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...body }, options);

  it('parses a minimal request', () => {
    expect(messages({})).toEqual({
      request: { model: 'm', maxTokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false },
      reasoningContentCompat: false,
    });
  });

  it('joins system blocks and maps a tool-use conversation', () => {
    const { request } = messages({
      system: [
        { type: 'text', text: 'You are helpful.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Use tools.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc text' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'y' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'found' },
                { type: 'image', source: { type: 'url', url: 'https://x/r.png' } },
              ],
              is_error: true,
            },
            { type: 'text', text: 'And?' },
            { type: 'tool_addition', tool: { name: 'x' } },
          ],
        },
        { role: 'system', content: 'Be brief now.' },
        {
          role: 'user',
          content: [
            { type: 'mid_conv_system', content: [{ type: 'text', text: 'Extra rule.' }] },
            { type: 'text', text: 'ok' },
          ],
        },
      ],
    });
    expect(request.system).toBe('You are helpful.\n\nUse tools.');
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image', mediaType: 'image/png', data: 'AAA' },
          { type: 'image', url: 'https://x/y.png' },
          { type: 'text', text: 'doc text' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'Need the tool.', signature: 'sig' },
          { type: 'text', text: 'Checking.' },
        ],
        toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"y"}' }],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: 'found', isError: true },
      {
        role: 'user',
        content: [
          { type: 'image', url: 'https://x/r.png' },
          { type: 'text', text: 'And?' },
        ],
      },
      { role: 'system', content: 'Be brief now.' },
      { role: 'system', content: 'Extra rule.' },
      { role: 'user', content: [{ type: 'text', text: 'ok' }] },
    ]);
  });

  it('maps tools, tool_choice, sampling and metadata', () => {
    const { request } = messages({
      tools: [
        { name: 'lookup', description: 'Looks up', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      ],
      tool_choice: { type: 'any' },
      stop_sequences: ['END'],
      temperature: 0.7,
      top_p: 0,
      top_k: 0,
      stream: true,
      metadata: { user_id: 'u-9' },
      betas: ['x-2025'],
      context_management: { edits: [] },
    });
    expect(request).toMatchObject({
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' } }],
      toolChoice: 'required',
      stop: ['END'],
      temperature: 0.7,
      stream: true,
      user: 'u-9',
    });
    // 0 means "not set" for top_p and top_k.
    expect(request.topP).toBeUndefined();
    expect(request.topK).toBeUndefined();
    expect(messages({ tool_choice: { type: 'tool', name: 'lookup' } }).request.toolChoice).toEqual({ name: 'lookup' });
    expect(messages({ top_k: 5, top_p: 0.5 }).request).toMatchObject({ topK: 5, topP: 0.5 });
  });

  it('maps thinking', () => {
    expect(messages({ thinking: { type: 'enabled', budget_tokens: 1024 } }).request.reasoning).toEqual({ enabled: true, budgetTokens: 1024, exclude: false });
    expect(messages({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'low' } }).request.reasoning).toEqual({
      enabled: true,
      effort: 'low',
      exclude: true,
      display: 'omitted',
    });
    expect(messages({ thinking: { type: 'disabled' } }).request.reasoning).toEqual({ enabled: false, exclude: false });
    expect(messages({ thinking: { type: 'enabled', budget_tokens: 1024 } }, { reasoningExcludeSuffix: true }).request.reasoning?.exclude).toBe(true);
  });

  it('rejects a system message in first place with the prescribed message', () => {
    const error = rejection('messages', {
      model: 'm',
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(error.message).toBe('messages.0: a system role may not be the first message; use the top-level system field');
    expect(error.param).toBe('messages.0.role');
  });

  it.each([
    [{ messages: undefined }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
    [{ messages: [{ role: 'user' }] }, 'messages.0.content'],
    [{ messages: [{ role: 'user', content: [{ type: 'video' }] }] }, 'messages.0.content.0.type'],
    [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, 'messages.0.content.0.source.type'],
    [
      { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' } }] }] },
      'messages.0.content.0.source.type',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages.0.content.0.tool_use_id'],
    [{ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: 'x' }] }] }, 'messages.0.content.0.input'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ temperature: 1.5 }, 'temperature'],
    [{ top_k: -1 }, 'top_k'],
    [{ system: [{ type: 'image' }] }, 'system.0.type'],
    [{ thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    [{ thinking: { type: 'adaptive', display: 5 } }, 'thinking.display'],
    [{ tools: [{ name: 'f' }] }, 'tools.0.input_schema'],
    [{ tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    [{ tool_choice: 'auto' }, 'tool_choice'],
    [{ stop_sequences: 'END' }, 'stop_sequences'],
    [{ metadata: { user_id: 5 } }, 'metadata.user_id'],
    [{ betas: [1] }, 'betas.0'],
    [{ output_config: { effort: ['high'] } }, 'output_config.effort'],
  ])('rejects %j at %s', (body, param) => {
    const error = rejection('messages', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...body });
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: `)).toBe(true);
  });
});

describe('parseClientRequest: a value the gateway does not know in a field that only steers the upstream', () => {
  const chat = (body: Record<string, unknown>) => parseClientRequest('chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }, opts);
  const responses = (body: Record<string, unknown>) => parseClientRequest('responses', { model: 'm', input: 'hi', ...body }, opts);
  const messages = (body: Record<string, unknown>, options: ParseOptions = opts) =>
    parseClientRequest('messages', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...body }, options);

  it('takes a new effort level as reasoning on, at the default effort', () => {
    const on = { enabled: true, exclude: false };
    expect(chat({ reasoning_effort: 'extreme' }).request.reasoning).toEqual(on);
    expect(chat({ reasoning: { effort: 'ultra' } }).request.reasoning).toEqual(on);
    expect(responses({ reasoning: { effort: 'max-ish' } }).request.reasoning).toEqual(on);
    expect(messages({ thinking: { type: 'adaptive' }, output_config: { effort: 'huge' } }).request.reasoning).toEqual(on);
  });

  it('accepts a new kind of responses reasoning summary', () => {
    expect(responses({ reasoning: { summary: 'verbose' } }).request.reasoning).toEqual({ enabled: true, exclude: false });
  });

  it('keeps a thinking display mode as sent, known or not; only omitted hides the thinking', () => {
    expect(messages({ thinking: { type: 'adaptive', display: 'updates' } }).request.reasoning).toEqual({ enabled: true, exclude: false, display: 'updates' });
    expect(messages({ thinking: { type: 'enabled', budget_tokens: 2048, display: 'sketch' } }).request.reasoning).toEqual({
      enabled: true,
      budgetTokens: 2048,
      exclude: false,
      display: 'sketch',
    });
  });

  it("carries the anthropic-beta header's flags and the body's betas, once each", () => {
    const parsed = messages({ betas: ['b-2026', 'c-2026'] }, { ...opts, betas: ['a-2026', 'b-2026'] });
    expect(parsed.request.betas).toEqual(['a-2026', 'b-2026', 'c-2026']);
    expect(messages({}).request.betas).toBeUndefined();
  });

  it('skips a chat tool of a type it does not serve, as responses skip hosted tools', () => {
    const { request } = chat({
      tools: [
        { type: 'custom', custom: { name: 'grammar', format: { type: 'text' } } },
        { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
      ],
    });
    expect(request.tools).toEqual([{ name: 'f', parameters: { type: 'object' } }]);
  });
});

describe('parseClientRequest: web_search', () => {
  it.each(['chat', 'responses'] as const)('%s: false is accepted, true is refused naming web_search', (format) => {
    const base = format === 'chat' ? { model: 'm', messages: [{ role: 'user', content: 'hi' }] } : { model: 'm', input: 'hi' };
    expect(() => parseClientRequest(format, { ...base, web_search: false }, { reasoningExcludeSuffix: false })).not.toThrow();
    expect(() => parseClientRequest(format, { ...base, web_search: true }, { reasoningExcludeSuffix: false })).toThrow(
      expect.objectContaining({ param: 'web_search', message: expect.stringContaining('not available') }),
    );
  });
});
