/**
 * Tool calling round trips in each format, against each kind of upstream: the model asks for
 * `get_weather` with JSON arguments, the client runs it and sends the result back, and the model
 * answers with it. Streamed argument deltas must assemble into the same valid JSON.
 */
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { MessageParam, RawMessageStreamEvent, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { createAccount, TestAccount } from '../support/api';
import {
  ADAPTER_MODELS,
  anthropicClient,
  chatWeatherTool,
  fakeRequestsMentioning,
  marker,
  messagesWeatherTool,
  openaiClient,
  responsesWeatherTool,
} from '../support/clients';

const RESULT = 'Sunny, 21 degrees';

/** Arguments must be a JSON object naming a city (the fakes read it from the prompt, the simulator samples the schema). */
function expectWeatherArguments(args: unknown): Record<string, unknown> {
  const parsed = (typeof args === 'string' ? JSON.parse(args) : args) as Record<string, unknown>;
  expect(parsed).toEqual(expect.objectContaining({ city: expect.any(String) }));
  expect(['celsius', 'fahrenheit', undefined]).toContain(parsed.unit);
  return parsed;
}

describe.each(ADAPTER_MODELS)('tool calls through the $adapter adapter ($model)', ({ adapter, model }) => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  const prompt = (mk: string) => `What is the weather in Paris? Use the get_weather tool. (${mk})`;

  describe('chat completions', () => {
    it('asks for get_weather, takes the tool result and answers with it', async () => {
      const mk = marker('chattool');
      const client = openaiClient(account.masterKey);
      const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: prompt(mk) }];
      const first = await client.chat.completions.create({ model, messages, tools: [chatWeatherTool] });
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const calls = first.choices[0].message.tool_calls ?? [];
      expect(calls).toHaveLength(1);
      const call = calls[0] as { id: string; type: 'function'; function: { name: string; arguments: string } };
      expect(call.type).toBe('function');
      expect(call.id).toEqual(expect.any(String));
      expect(call.function.name).toBe('get_weather');
      expectWeatherArguments(call.function.arguments);

      const second = await client.chat.completions.create({
        model,
        tools: [chatWeatherTool],
        messages: [...messages, first.choices[0].message as ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: RESULT }],
      });
      expect(second.choices[0].finish_reason).toBe('stop');
      expect(second.choices[0].message.tool_calls ?? []).toEqual([]);
      expect(second.choices[0].message.content).toContain(RESULT);
      expect(second.choices[0].message.content).toContain('get_weather');

      if (adapter === 'openai') {
        const sent = (await fakeRequestsMentioning('openai', mk)).map((request) => request.body);
        expect(sent[0].tools).toEqual([{ type: 'function', function: chatWeatherTool.function }]);
        expect(sent[1].messages.slice(-2)).toEqual([
          expect.objectContaining({ role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: call.function }] }),
          { role: 'tool', tool_call_id: call.id, content: RESULT },
        ]);
      }
      if (adapter === 'anthropic') {
        const sent = (await fakeRequestsMentioning('anthropic', mk)).map((request) => request.body);
        expect(sent[0].tools).toEqual([{ name: 'get_weather', description: 'Current weather in a city', input_schema: chatWeatherTool.function.parameters }]);
        expect(sent[1].messages.slice(-2)).toEqual([
          { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: JSON.parse(call.function.arguments) }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: RESULT }] },
        ]);
      }
    });

    it('streams tool-call argument deltas that assemble into the same valid JSON', async () => {
      const mk = marker('chattoolstream');
      const client = openaiClient(account.masterKey);
      const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: prompt(mk) }];
      const whole = await client.chat.completions.create({ model, messages, tools: [chatWeatherTool] });
      const stream = await client.chat.completions.create({ model, messages, tools: [chatWeatherTool], stream: true });
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);

      const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
      expect(toolDeltas.every((delta) => delta.index === 0)).toBe(true);
      expect(toolDeltas[0]).toMatchObject({ id: expect.any(String), type: 'function', function: { name: 'get_weather' } });
      const argumentDeltas = toolDeltas.map((delta) => delta.function?.arguments ?? '').filter((piece) => piece !== '');
      expect(argumentDeltas.length).toBeGreaterThan(1);
      const args = argumentDeltas.join('');
      expect(expectWeatherArguments(args)).toEqual(JSON.parse((whole.choices[0].message.tool_calls![0] as any).function.arguments));
      expect(chunks.flatMap((chunk) => (chunk.choices[0]?.finish_reason ? [chunk.choices[0].finish_reason] : []))).toEqual(['tool_calls']);

      // The SDK's helper assembles the same call.
      const helper = client.chat.completions.stream({ model, messages, tools: [chatWeatherTool] });
      const final = await helper.finalChatCompletion();
      const assembled = final.choices[0].message.tool_calls![0] as any;
      expect(assembled.function.name).toBe('get_weather');
      expect(JSON.parse(assembled.function.arguments)).toEqual(JSON.parse(args));
    });
  });

  describe('responses', () => {
    it('asks for get_weather as a function_call item, takes the function_call_output and answers with it', async () => {
      const mk = marker('resptool');
      const client = openaiClient(account.masterKey);
      const input: ResponseInputItem[] = [{ role: 'user', content: prompt(mk) }];
      const first = await client.responses.create({ model, input, tools: [responsesWeatherTool] });
      expect(first.status).toBe('completed');
      const calls = first.output.filter((item) => item.type === 'function_call');
      expect(calls).toHaveLength(1);
      const call = calls[0] as Extract<(typeof first.output)[number], { type: 'function_call' }>;
      expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed', call_id: expect.any(String) });
      expect(call.id).toMatch(/^fc_/);
      expectWeatherArguments(call.arguments);

      const second = await client.responses.create({
        model,
        tools: [responsesWeatherTool],
        input: [...input, ...(first.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: RESULT }],
      });
      expect(second.status).toBe('completed');
      expect(second.output.filter((item) => item.type === 'function_call')).toEqual([]);
      expect(second.output_text).toContain(RESULT);

      if (adapter === 'openai') {
        const sent = (await fakeRequestsMentioning('openai', mk)).map((request) => request.body);
        expect(sent[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: call.call_id, content: RESULT });
      }
      if (adapter === 'anthropic') {
        const sent = (await fakeRequestsMentioning('anthropic', mk)).map((request) => request.body);
        expect(sent[1].messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: RESULT }] });
      }
    });

    it('streams function_call_arguments deltas that assemble into the same valid JSON', async () => {
      const mk = marker('resptoolstream');
      const client = openaiClient(account.masterKey);
      const stream = await client.responses.create({ model, input: prompt(mk), tools: [responsesWeatherTool], stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);

      const added = events.find((event) => event.type === 'response.output_item.added' && event.item.type === 'function_call') as any;
      expect(added.item).toMatchObject({ type: 'function_call', name: 'get_weather' });
      const deltas = events.flatMap((event) => (event.type === 'response.function_call_arguments.delta' ? [event.delta] : []));
      expect(deltas.length).toBeGreaterThan(1);
      const args = deltas.join('');
      expectWeatherArguments(args);
      const done = events.find((event) => event.type === 'response.function_call_arguments.done') as any;
      expect(done.arguments).toBe(args);
      const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
      expect(completed.type).toBe('response.completed');
      const finalCall = completed.response.output.find((item) => item.type === 'function_call') as any;
      expect(finalCall).toMatchObject({ name: 'get_weather', arguments: args, call_id: added.item.call_id });

      const helper = client.responses.stream({ model, input: prompt(mk), tools: [responsesWeatherTool] });
      const final = await helper.finalResponse();
      expect(JSON.parse((final.output.find((item) => item.type === 'function_call') as any).arguments)).toEqual(JSON.parse(args));
    });
  });

  describe('messages', () => {
    it('asks for get_weather with a tool_use block, takes the tool_result and answers with it', async () => {
      const mk = marker('msgtool');
      const client = anthropicClient(account.masterKey);
      const messages: MessageParam[] = [{ role: 'user', content: prompt(mk) }];
      const first = await client.messages.create({ model, max_tokens: 500, messages, tools: [messagesWeatherTool] });
      expect(first.stop_reason).toBe('tool_use');
      const uses = first.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
      expect(uses).toHaveLength(1);
      expect(uses[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', id: expect.any(String) });
      expectWeatherArguments(uses[0].input);

      const second = await client.messages.create({
        model,
        max_tokens: 500,
        tools: [messagesWeatherTool],
        messages: [
          ...messages,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: RESULT }] },
        ],
      });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content.filter((block) => block.type === 'tool_use')).toEqual([]);
      const text = second.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      expect(text).toContain(RESULT);

      if (adapter === 'openai') {
        const sent = (await fakeRequestsMentioning('openai', mk)).map((request) => request.body);
        expect(sent[0].tools).toEqual([
          { type: 'function', function: { name: 'get_weather', description: 'Current weather in a city', parameters: messagesWeatherTool.input_schema } },
        ]);
        expect(sent[1].messages.slice(-2)).toEqual([
          expect.objectContaining({
            role: 'assistant',
            tool_calls: [{ id: uses[0].id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(uses[0].input) } }],
          }),
          { role: 'tool', tool_call_id: uses[0].id, content: RESULT },
        ]);
      }
      if (adapter === 'anthropic') {
        const sent = (await fakeRequestsMentioning('anthropic', mk)).map((request) => request.body);
        expect(sent[1].messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: RESULT }] });
      }
    });

    it('streams input_json_delta pieces that assemble into the same valid JSON', async () => {
      const mk = marker('msgtoolstream');
      const client = anthropicClient(account.masterKey);
      const messages: MessageParam[] = [{ role: 'user', content: prompt(mk) }];
      const stream = await client.messages.create({ model, max_tokens: 500, messages, tools: [messagesWeatherTool], stream: true });
      const events: RawMessageStreamEvent[] = [];
      for await (const event of stream) events.push(event);

      const start = events.find((event) => event.type === 'content_block_start' && event.content_block.type === 'tool_use') as any;
      expect(start.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', id: expect.any(String) });
      const pieces = events.flatMap((event) =>
        event.type === 'content_block_delta' && event.delta.type === 'input_json_delta' && event.index === start.index ? [event.delta.partial_json] : [],
      );
      expect(pieces.length).toBeGreaterThan(1);
      const args = expectWeatherArguments(pieces.join(''));
      const messageDelta = events.find((event) => event.type === 'message_delta') as any;
      expect(messageDelta.delta.stop_reason).toBe('tool_use');

      const final = await client.messages.stream({ model, max_tokens: 500, messages, tools: [messagesWeatherTool] }).finalMessage();
      const use = final.content.find((block): block is ToolUseBlock => block.type === 'tool_use')!;
      expect(use.input).toEqual(args);
      expect(final.stop_reason).toBe('tool_use');
    });
  });
});

describe('tools[].strict on responses', () => {
  it("is echoed as sent, true (OpenAI's default for function tools) when left out, and reaches an OpenAI upstream as sent", async () => {
    const account = createAccount('pro', '100');
    const mk = marker('strict');
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const tool = (name: string, strict?: boolean) => ({ type: 'function' as const, name, parameters, ...(strict === undefined ? {} : { strict }) });
    const tools = [tool('sent_true', true), tool('sent_false', false), tool('left_out')] as any;
    const response = await openaiClient(account.masterKey).responses.create({ model: 'fake-openai', input: `Hello ${mk}`, tools });
    expect(response.tools.map((echoed: any) => [echoed.name, echoed.strict])).toEqual([
      ['sent_true', true],
      ['sent_false', false],
      ['left_out', true],
    ]);
    const [sent] = await fakeRequestsMentioning('openai', mk);
    expect(sent.body.tools.map((sentTool: any) => sentTool.function.strict)).toEqual([true, false, undefined]);
  });
});
