/**
 * The three client formats against the three kinds of upstream, through the official SDKs:
 * whole replies and streams, checking what a user reads (text, ids, object types, stop reasons,
 * usage) and that a streamed reply is the same reply as the non-streamed one.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { createAccount, TestAccount } from '../support/api';
import { ADAPTER_MODELS, anthropicClient, fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY } from '../support/fake-upstreams';

describe.each(ADAPTER_MODELS)('text generation through the $adapter adapter ($model)', ({ adapter, model }) => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  describe('chat completions', () => {
    it('answers a whole chat.completion with text, finish_reason stop and usage', async () => {
      const mk = marker('chat');
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'You are a test double.' },
          { role: 'user', content: `Hello ${mk}` },
        ],
        max_tokens: 200,
      });
      expect(completion.object).toBe('chat.completion');
      expect(completion.id).toEqual(expect.any(String));
      expect(completion.id.length).toBeGreaterThan(0);
      expect(completion.model).toBe(model);
      expect(typeof completion.created).toBe('number');
      expect(completion.choices).toHaveLength(1);
      const [choice] = completion.choices;
      expect(choice.index).toBe(0);
      expect(choice.finish_reason).toBe('stop');
      expect(choice.message.role).toBe('assistant');
      expect(choice.message.content).toContain(mk);
      expect(choice.message.tool_calls ?? []).toEqual([]);
      expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
      expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);

      if (adapter === 'openai') {
        const [sent] = await fakeRequestsMentioning('openai', mk);
        expect(sent.path).toBe('/v1/chat/completions');
        expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
        expect(sent.body).toMatchObject({
          model: 'echo',
          stream: false,
          max_tokens: 200,
          messages: [
            { role: 'system', content: 'You are a test double.' },
            { role: 'user', content: `Hello ${mk}` },
          ],
        });
      }
      if (adapter === 'anthropic') {
        const [sent] = await fakeRequestsMentioning('anthropic', mk);
        expect(sent.path).toBe('/v1/messages');
        expect(sent.headers['x-api-key']).toBe(FAKE_ANTHROPIC_KEY);
        expect(sent.headers['anthropic-version']).toBe('2023-06-01');
        expect(sent.headers.authorization).toBeUndefined();
        // The leading system message becomes Anthropic's top-level system prompt.
        expect(sent.body).toMatchObject({
          model: 'echo',
          system: 'You are a test double.',
          max_tokens: 200,
          stream: false,
          messages: [{ role: 'user', content: [{ type: 'text', text: `Hello ${mk}` }] }],
        });
      }
    });

    it('streams chat.completion.chunk deltas (create with stream: true) that join to the same reply', async () => {
      const mk = marker('chatstream');
      const client = openaiClient(account.masterKey);
      const messages = [{ role: 'user' as const, content: `Stream to me ${mk}` }];
      const whole = await client.chat.completions.create({ model, messages });
      const stream = await client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);

      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) {
        expect(chunk.object).toBe('chat.completion.chunk');
        expect(chunk.id).toBe(chunks[0].id);
        expect(chunk.model).toBe(model);
      }
      const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
      expect(text).toBe(whole.choices[0].message.content);
      expect(text).toContain(mk);
      // More than one content delta: the reply really was streamed piece by piece.
      expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.content).length).toBeGreaterThan(1);
      const finishes = chunks.flatMap((chunk) => (chunk.choices[0]?.finish_reason ? [chunk.choices[0].finish_reason] : []));
      expect(finishes).toEqual(['stop']);
      const last = chunks[chunks.length - 1];
      expect(last.choices).toEqual([]);
      expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(last.usage!.completion_tokens).toBeGreaterThan(0);
      expect(last.usage).toMatchObject({ prompt_tokens: whole.usage!.prompt_tokens, completion_tokens: whole.usage!.completion_tokens });

      if (adapter === 'openai') {
        const sent = (await fakeRequestsMentioning('openai', mk)).find((request) => request.body.stream === true)!;
        expect(sent.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
        expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
      }
      if (adapter === 'anthropic') {
        const sent = (await fakeRequestsMentioning('anthropic', mk)).find((request) => request.body.stream === true)!;
        expect(sent.headers['x-api-key']).toBe(FAKE_ANTHROPIC_KEY);
        expect(sent.headers['anthropic-version']).toBe('2023-06-01');
      }
    });

    it('streams with the chat.completions.stream helper, whose final completion equals the joined deltas', async () => {
      const mk = marker('chathelper');
      const client = openaiClient(account.masterKey);
      const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: `Helper ${mk}` }] });
      const deltas: string[] = [];
      stream.on('content.delta', ({ delta }) => deltas.push(delta));
      const final = await stream.finalChatCompletion();
      expect(final.choices[0].message.content).toBe(deltas.join(''));
      expect(final.choices[0].message.content).toContain(mk);
      expect(final.choices[0].finish_reason).toBe('stop');
      expect(final.model).toBe(model);
      expect(final.id).toEqual(expect.any(String));
      expect(deltas.length).toBeGreaterThan(1);
    });
  });

  describe('responses', () => {
    it('answers a whole response object with an output message and usage', async () => {
      const mk = marker('resp');
      const response = await openaiClient(account.masterKey).responses.create({
        model,
        instructions: 'You are a test double.',
        input: `Hello ${mk}`,
        max_output_tokens: 200,
      });
      expect(response.object).toBe('response');
      expect(response.id).toMatch(/^resp_/);
      expect(response.status).toBe('completed');
      expect(response.model).toBe(model);
      expect(response.output_text).toContain(mk);
      const messages = response.output.filter((item) => item.type === 'message');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
      expect((messages[0] as any).content[0]).toMatchObject({ type: 'output_text', annotations: [] });
      expect(response.usage!.input_tokens).toBeGreaterThan(0);
      expect(response.usage!.output_tokens).toBeGreaterThan(0);
      expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);

      if (adapter === 'openai') {
        const [sent] = await fakeRequestsMentioning('openai', mk);
        expect(sent.body).toMatchObject({
          model: 'echo',
          max_tokens: 200,
          messages: [
            { role: 'system', content: 'You are a test double.' },
            { role: 'user', content: `Hello ${mk}` },
          ],
        });
      }
      if (adapter === 'anthropic') {
        const [sent] = await fakeRequestsMentioning('anthropic', mk);
        expect(sent.body).toMatchObject({ model: 'echo', system: 'You are a test double.', max_tokens: 200 });
      }
    });

    it('streams response events (create with stream: true) whose text deltas join to the completed response', async () => {
      const mk = marker('respstream');
      const client = openaiClient(account.masterKey);
      const whole = await client.responses.create({ model, input: `Stream ${mk}` });
      const stream = await client.responses.create({ model, input: `Stream ${mk}`, stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);

      expect(events[0].type).toBe('response.created');
      const last = events[events.length - 1];
      expect(last.type).toBe('response.completed');
      const numbers = events.map((event) => event.sequence_number);
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(new Set(numbers).size).toBe(numbers.length);
      const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
      expect(deltas.length).toBeGreaterThan(1);
      const completed = (last as Extract<ResponseStreamEvent, { type: 'response.completed' }>).response;
      expect(completed.id).toMatch(/^resp_/);
      expect(completed.status).toBe('completed');
      const completedText = completed.output.flatMap((item: any) => (item.type === 'message' ? item.content.map((part: any) => part.text) : [])).join('');
      expect(deltas.join('')).toBe(completedText);
      expect(completedText).toBe(whole.output_text);
      expect(completed.usage!.input_tokens).toBeGreaterThan(0);
      expect(completed.usage!.output_tokens).toBeGreaterThan(0);
    });

    it('streams with the responses.stream helper, whose finalResponse equals the joined deltas', async () => {
      const mk = marker('resphelper');
      const stream = openaiClient(account.masterKey).responses.stream({ model, input: `Helper ${mk}` });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
      const final = await stream.finalResponse();
      expect(final.object).toBe('response');
      expect(final.status).toBe('completed');
      expect(final.output_text).toBe(deltas.join(''));
      expect(final.output_text).toContain(mk);
      expect(final.usage!.output_tokens).toBeGreaterThan(0);
    });
  });

  describe('messages', () => {
    it('answers a whole message with a text block, end_turn and usage', async () => {
      const mk = marker('msg');
      const message = await anthropicClient(account.masterKey).messages.create({
        model,
        max_tokens: 200,
        system: 'You are a test double.',
        messages: [{ role: 'user', content: `Hello ${mk}` }],
      });
      expect(message.type).toBe('message');
      expect(message.id).toMatch(/^msg_/);
      expect(message.role).toBe('assistant');
      expect(message.model).toBe(model);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.stop_sequence).toBeNull();
      expect(message.content).toHaveLength(1);
      expect(message.content[0].type).toBe('text');
      expect((message.content[0] as { text: string }).text).toContain(mk);
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(message.usage.output_tokens).toBeGreaterThan(0);

      if (adapter === 'openai') {
        const [sent] = await fakeRequestsMentioning('openai', mk);
        expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
        // Anthropic's top-level system prompt becomes the leading system message.
        expect(sent.body).toMatchObject({
          model: 'echo',
          max_tokens: 200,
          messages: [
            { role: 'system', content: 'You are a test double.' },
            { role: 'user', content: `Hello ${mk}` },
          ],
        });
      }
      if (adapter === 'anthropic') {
        const [sent] = await fakeRequestsMentioning('anthropic', mk);
        expect(sent.headers['x-api-key']).toBe(FAKE_ANTHROPIC_KEY);
        expect(sent.headers['anthropic-version']).toBe('2023-06-01');
        expect(sent.body).toMatchObject({ model: 'echo', system: 'You are a test double.', max_tokens: 200 });
      }
    });

    it('streams message events (create with stream: true) whose text deltas join to the same reply', async () => {
      const mk = marker('msgstream');
      const client = anthropicClient(account.masterKey);
      const messages = [{ role: 'user' as const, content: `Stream ${mk}` }];
      const whole = await client.messages.create({ model, max_tokens: 300, messages });
      const stream = await client.messages.create({ model, max_tokens: 300, messages, stream: true });
      const events: RawMessageStreamEvent[] = [];
      for await (const event of stream) events.push(event);

      expect(events[0].type).toBe('message_start');
      expect(events[events.length - 1].type).toBe('message_stop');
      const start = events[0] as Extract<RawMessageStreamEvent, { type: 'message_start' }>;
      expect(start.message.id).toMatch(/^msg_/);
      expect(start.message.model).toBe(model);
      const deltas = events.flatMap((event) => (event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? [event.delta.text] : []));
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe((whole.content[0] as { text: string }).text);
      const messageDelta = events.find((event) => event.type === 'message_delta') as Extract<RawMessageStreamEvent, { type: 'message_delta' }>;
      expect(messageDelta.delta.stop_reason).toBe('end_turn');
      expect(messageDelta.usage.output_tokens).toBeGreaterThan(0);
      expect(messageDelta.usage.output_tokens).toBe(whole.usage.output_tokens);
    });

    it('streams with the messages.stream helper, whose finalMessage equals the joined text', async () => {
      const mk = marker('msghelper');
      const stream = anthropicClient(account.masterKey).messages.stream({
        model,
        max_tokens: 300,
        messages: [{ role: 'user', content: `Helper ${mk}` }],
      });
      const deltas: string[] = [];
      stream.on('text', (delta) => deltas.push(delta));
      const final = await stream.finalMessage();
      expect(final.id).toMatch(/^msg_/);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.content).toHaveLength(1);
      expect((final.content[0] as { text: string }).text).toBe(deltas.join(''));
      expect((final.content[0] as { text: string }).text).toContain(mk);
      expect(final.usage.input_tokens).toBeGreaterThan(0);
      expect(final.usage.output_tokens).toBeGreaterThan(0);
    });
  });
});

describe("OpenRouter's usage: {include: true} on a chat stream", () => {
  it('ends the stream with the usage chunk, as stream_options.include_usage does, and none without either', async () => {
    const account = createAccount('pro', '100');
    const client = openaiClient(account.masterKey);
    const chunks = async (extra: Record<string, unknown>) => {
      // The OpenRouter AI SDK provider's streamed request: `usage: {include: true}`, no stream_options.
      const stream = await client.chat.completions.create({
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'Count me' }],
        stream: true,
        ...extra,
      } as any);
      const received: ChatCompletionChunk[] = [];
      for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) received.push(chunk);
      return received;
    };
    const openrouter = await chunks({ usage: { include: true } });
    const openai = await chunks({ stream_options: { include_usage: true } });
    for (const received of [openrouter, openai]) {
      const last = received.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({ prompt_tokens: openai.at(-1)!.usage!.prompt_tokens, completion_tokens: openai.at(-1)!.usage!.completion_tokens });
    }
    expect((await chunks({})).some((chunk) => chunk.usage)).toBe(false);
  });
});
