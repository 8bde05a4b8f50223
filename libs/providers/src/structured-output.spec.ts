import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { CanonicalRequest, CanonicalStreamEvent, ResponseFormat } from '@gateway/canonical';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { AnthropicStreamMapper, fromAnthropicResponse, toAnthropicRequest, type AnthropicStreamEvent } from './anthropic/anthropic-mapping';
import { toOpenAIRequest } from './openai/openai-mapping';
import type { UpstreamRoute } from './provider-adapter';
import { SimulatorAdapter } from './simulator/simulator.adapter';
import { canonicalRequest, weatherTool } from './testing/canonical-fixtures';
import { collect, sendJson, sendSse, startFakeUpstream, type FakeUpstream } from './testing/fake-upstream';
import { DomainError } from '@gateway/errors';

const schema = {
  type: 'object',
  properties: { answer: { type: 'integer', minimum: 1, maximum: 10 }, steps: { type: 'array', items: { type: 'string' }, minItems: 2 } },
  required: ['answer', 'steps'],
  additionalProperties: false,
};
const jsonSchema: ResponseFormat = { type: 'json_schema', name: 'math', description: 'A worked answer', schema, strict: true, param: 'response_format' };
const jsonObject: ResponseFormat = { type: 'json_object', param: 'text.format' };
const withFormat = (responseFormat: ResponseFormat, overrides: Partial<CanonicalRequest> = {}) => canonicalRequest({ responseFormat, ...overrides });

function textOf(events: CanonicalStreamEvent[]): string {
  return events.map((event) => (event.type === 'text_delta' ? event.text : '')).join('');
}

function refusal(call: () => unknown): DomainError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a refusal');
}

describe('structured output → OpenAI-compatible upstreams', () => {
  it('sends response_format as Chat Completions defines it', () => {
    expect(toOpenAIRequest(withFormat(jsonSchema), 'gpt', false).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'math', description: 'A worked answer', schema, strict: true },
    });
    expect(toOpenAIRequest(withFormat(jsonObject), 'gpt', true).response_format).toEqual({ type: 'json_object' });
    expect(toOpenAIRequest(canonicalRequest(), 'gpt', false)).not.toHaveProperty('response_format');
  });

  it('names a schema that came without one (messages clients send none)', () => {
    const format: ResponseFormat = { type: 'json_schema', schema, param: 'output_config.format' };
    expect(toOpenAIRequest(withFormat(format), 'gpt', false).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema } });
  });
});

describe('structured output → Anthropic upstreams', () => {
  it('uses output_config.format on a model with native structured outputs', () => {
    const body = toAnthropicRequest(withFormat(jsonSchema), 'claude', false, true);
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });

  it('otherwise forces a single tool whose input schema is the schema', () => {
    const body = toAnthropicRequest(withFormat(jsonSchema), 'claude', false);
    expect(body).not.toHaveProperty('output_config');
    expect(body.tools).toEqual([{ name: 'math', description: 'A worked answer', input_schema: schema }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'math' });
  });

  it('asks for JSON-object mode with an open object schema, even on a native model', () => {
    const body = toAnthropicRequest(withFormat(jsonObject), 'claude', false, true);
    expect(body.tools).toEqual([expect.objectContaining({ name: 'structured_output', input_schema: { type: 'object', additionalProperties: true } })]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'structured_output' });
  });

  it("keeps the client's tools callable beside the format tool, and out of a tool_choice 'none' turn", () => {
    const both = toAnthropicRequest(withFormat(jsonSchema, { tools: [weatherTool] }), 'claude', false);
    expect(both.tools?.map((tool) => tool.name)).toEqual(['get_weather', 'math']);
    expect(both.tool_choice).toEqual({ type: 'any' });
    const none = toAnthropicRequest(withFormat(jsonSchema, { tools: [weatherTool], toolChoice: 'none' }), 'claude', false);
    expect(none.tools?.map((tool) => tool.name)).toEqual(['math']);
    expect(none.tool_choice).toEqual({ type: 'tool', name: 'math' });
    const forced = toAnthropicRequest(withFormat(jsonSchema, { tools: [weatherTool], toolChoice: { name: 'get_weather' } }), 'claude', false);
    expect(forced.tools?.map((tool) => tool.name)).toEqual(['get_weather']);
  });

  it('refuses, naming the client field, what a forced tool cannot carry', () => {
    const thinking = refusal(() => toAnthropicRequest(withFormat(jsonSchema, { reasoning: { enabled: true, exclude: false } }), 'claude', false));
    expect(thinking).toMatchObject({ param: 'response_format' });
    expect(thinking.message).toContain('reasoning');
    const array: ResponseFormat = { type: 'json_schema', name: 'list', schema: { type: 'array', items: { type: 'string' } }, param: 'text.format' };
    expect(refusal(() => toAnthropicRequest(withFormat(array), 'claude', false))).toMatchObject({ param: 'text.format' });
    const clash = { ...weatherTool, name: 'math' };
    expect(refusal(() => toAnthropicRequest(withFormat(jsonSchema, { tools: [clash] }), 'claude', false))).toMatchObject({ param: 'response_format' });
    // Native structured outputs take thinking and any root type.
    expect(() => toAnthropicRequest(withFormat({ ...array }, { reasoning: { enabled: true, exclude: false } }), 'claude', false, true)).not.toThrow();
  });

  it('unwraps the forced tool call into the text of an ordinary finished answer', () => {
    const response = fromAnthropicResponse(
      {
        id: 'msg_1',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'math', input: { answer: 4, steps: ['2+2', '4'] } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 20 },
      },
      withFormat(jsonSchema),
      'math',
    );
    expect(response).toMatchObject({ text: '{"answer":4,"steps":["2+2","4"]}', toolCalls: [], stopReason: 'stop' });
  });

  it("keeps the client's own tool calls (stop reason tool_calls) beside an unwrapped answer", () => {
    const response = fromAnthropicResponse(
      {
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'toolu_2', name: 'math', input: {} },
        ],
        stop_reason: 'tool_use',
      },
      withFormat(jsonSchema, { tools: [weatherTool] }),
      'math',
    );
    expect(response).toMatchObject({ text: '{}', toolCalls: [{ id: 'toolu_1', name: 'get_weather' }], stopReason: 'tool_calls' });
  });

  it('streams the forced tool input as text deltas', () => {
    const mapper = new AnthropicStreamMapper(withFormat(jsonSchema), 'math');
    const upstream: AnthropicStreamEvent[] = [
      { type: 'message_start', message: { id: 'msg_s', usage: { input_tokens: 12, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'math', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"answer": 4, ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"steps": ["a", "b"]}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    const events = upstream.flatMap((event) => mapper.map(event));
    mapper.end();
    expect(events.filter((event) => event.type.startsWith('tool_call'))).toEqual([]);
    expect(events.filter((event) => event.type === 'text_delta')).toEqual([
      { type: 'text_delta', text: '{"answer": 4, ' },
      { type: 'text_delta', text: '"steps": ["a", "b"]}' },
    ]);
    expect(events).toContainEqual({ type: 'finish', stopReason: 'stop' });
  });

  it('streams an empty forced tool input as {}', () => {
    const mapper = new AnthropicStreamMapper(withFormat(jsonObject), 'structured_output');
    const events = [
      { type: 'message_start', message: { id: 'm', usage: { input_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'structured_output' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 1 } },
    ].flatMap((event) => mapper.map(event));
    expect(textOf(events)).toBe('{}');
  });

  describe('AnthropicAdapter', () => {
    let upstream: FakeUpstream;
    let adapter: AnthropicAdapter;
    let route: UpstreamRoute;
    const signal = () => new AbortController().signal;

    beforeEach(async () => {
      upstream = await startFakeUpstream();
      adapter = new AnthropicAdapter();
      route = { adapter: 'anthropic', baseUrl: upstream.baseUrl, upstreamModel: 'claude-test' };
    });

    afterEach(async () => {
      await adapter.close();
      await upstream.close();
    });

    it('sends the forced tool and unwraps its streamed input, without the catalog capability', async () => {
      upstream.handle((_request, response) =>
        sendSse(response, [
          { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 5, output_tokens: 1 } } } },
          {
            event: 'content_block_start',
            data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'math', input: {} } },
          },
          { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"answer":3,' } } },
          {
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"steps":["x","y"]}' } },
          },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 8 } } },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]),
      );
      const events = await collect(adapter.stream(route, withFormat(jsonSchema, { stream: true }), signal()));
      expect(JSON.parse(textOf(events))).toEqual({ answer: 3, steps: ['x', 'y'] });
      expect(events).toContainEqual({ type: 'finish', stopReason: 'stop' });
      expect(upstream.requests[0].body).toMatchObject({ tool_choice: { type: 'tool', name: 'math' }, tools: [{ name: 'math', input_schema: schema }] });
    });

    it('sends output_config.format where the catalog says the model has structured outputs', async () => {
      upstream.handle((_request, response) =>
        sendJson(response, 200, {
          id: 'm',
          content: [{ type: 'text', text: '{"answer":2,"steps":["a","b"]}' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 9 },
        }),
      );
      const response = await adapter.complete({ ...route, structuredOutputs: true }, withFormat(jsonSchema), signal());
      expect(response).toMatchObject({ text: '{"answer":2,"steps":["a","b"]}', stopReason: 'stop' });
      expect(upstream.requests[0].body).toMatchObject({ output_config: { format: { type: 'json_schema', schema } } });
      expect(upstream.requests[0].body).not.toHaveProperty('tool_choice');
    });
  });
});

describe('structured output → the simulator', () => {
  const simulator = new SimulatorAdapter();
  const route: UpstreamRoute = { adapter: 'simulator', upstreamModel: 'sim-chat' };
  const signal = () => new AbortController().signal;
  const ajv = addFormats(new Ajv2020({ strict: false }));

  it.each([
    ['the request schema', schema],
    [
      'refs, allOf, nullable, tuples and bounds',
      {
        type: 'object',
        $defs: {
          point: { type: 'object', properties: { x: { type: 'number', exclusiveMinimum: 200 }, y: { type: 'integer', multipleOf: 7 } }, required: ['x', 'y'] },
        },
        properties: {
          origin: { $ref: '#/$defs/point' },
          path: { type: 'array', items: { $ref: '#/$defs/point' }, minItems: 3 },
          label: { anyOf: [{ type: 'string', minLength: 20, maxLength: 25 }, { type: 'null' }] },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], items: false },
          when: { type: 'string', format: 'date-time' },
          mode: { enum: ['fast', 'slow'] },
          both: {
            allOf: [
              { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
              { properties: { b: { const: 1 } }, required: ['b'] },
            ],
          },
        },
        required: ['origin', 'path', 'label', 'pair', 'when', 'mode', 'both'],
        additionalProperties: false,
      },
    ],
    ['a root that is not an object', { type: 'array', items: { type: 'integer', maximum: 3 }, minItems: 2 }],
  ])('answers JSON valid against %s, streamed and not', async (_label, candidate) => {
    const validate = ajv.compile(candidate);
    const format: ResponseFormat = { type: 'json_schema', name: 'x', schema: candidate, param: 'response_format' };
    const complete = await simulator.complete(route, withFormat(format), signal());
    const parsed: unknown = JSON.parse(complete.text);
    expect(validate.errors ?? validate(parsed)).toBe(true);
    expect(complete.stopReason).toBe('stop');
    const streamed = await collect(simulator.stream(route, withFormat(format, { stream: true }), signal()));
    expect(textOf(streamed)).toBe(complete.text);
    expect(streamed.filter((event) => event.type === 'text_delta').length).toBeGreaterThan(1);
  });

  it('answers a JSON object in json_object mode, and prose without a format', async () => {
    const object = await simulator.complete(route, withFormat(jsonObject), signal());
    expect(JSON.parse(object.text)).toEqual({ answer: expect.stringContaining('Hello there') });
    const prose = await simulator.complete(route, canonicalRequest(), signal());
    expect(() => JSON.parse(prose.text)).toThrow();
  });

  describe('json_object mode with the schema in the prompt (clients without structured outputs)', () => {
    const forecast = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        temperature: { type: 'number' },
        days: {
          type: 'array',
          items: { type: 'object', properties: { day: { type: 'string', format: 'date' }, rain: { type: 'boolean' } }, required: ['day', 'rain'] },
        },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        note: { type: 'string' },
      },
      required: ['city', 'temperature', 'days', 'unit'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    };
    const validate = ajv.compile({ ...forecast, $schema: undefined });
    // What the AI SDK's injectJsonInstruction writes into the system message.
    const injected = `JSON schema:\n${JSON.stringify(forecast)}\nYou MUST answer with a JSON object that matches the JSON schema above.`;

    it.each([
      ['the system prompt, as the AI SDK injects it', { system: injected }],
      [
        'a system message after a prompt of its own',
        {
          messages: [
            { role: 'system' as const, content: `Be brief.\n\n${injected}` },
            { role: 'user' as const, content: [{ type: 'text' as const, text: 'Forecast for Oslo' }] },
          ],
        },
      ],
      [
        'a line of a user message',
        {
          messages: [
            {
              role: 'user' as const,
              content: [{ type: 'text' as const, text: `Answer with JSON valid against:\n${JSON.stringify(forecast, null, 2)}\nThanks.` }],
            },
          ],
        },
      ],
    ])('answers an object valid against the schema in %s, with its required properties only', async (_where, overrides) => {
      const complete = await simulator.complete(route, withFormat(jsonObject, overrides), signal());
      const parsed = JSON.parse(complete.text) as Record<string, unknown>;
      expect(validate.errors ?? validate(parsed)).toBe(true);
      expect(Object.keys(parsed).sort()).toEqual(['city', 'days', 'temperature', 'unit']);
      expect(parsed['unit']).toBe('celsius');
      const streamed = await collect(simulator.stream(route, withFormat(jsonObject, { ...overrides, stream: true }), signal()));
      expect(textOf(streamed)).toBe(complete.text);
    });

    it('wraps the prose in an object when the prompt holds no schema (JSON that is not a schema does not count)', async () => {
      const request = withFormat(jsonObject, { messages: [{ role: 'user', content: [{ type: 'text', text: 'Echo this:\n{"city": "Paris"}' }] }] });
      expect(JSON.parse((await simulator.complete(route, request, signal())).text)).toEqual({ answer: expect.any(String) });
    });
  });

  it('still calls a tool the user asks for, with the format applying to the answer after it', async () => {
    const request = withFormat(jsonSchema, { tools: [weatherTool], messages: [{ role: 'user', content: [{ type: 'text', text: 'use get_weather' }] }] });
    expect((await simulator.complete(route, request, signal())).toolCalls).toHaveLength(1);
  });
});
