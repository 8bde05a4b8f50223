/**
 * Reasoning as each format shows it: chat `message.reasoning` (and `reasoning_content` on request),
 * messages `thinking` blocks with a signature, responses `reasoning` output items — and its absence
 * when the caller asks for it to be left out (`:reasoning-exclude`, `reasoning: {exclude: true}`).
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { ThinkingBlock } from '@anthropic-ai/sdk/resources/messages';
import { createAccount, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_SIGNATURE } from '../support/fake-upstreams';

describe('reasoning', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  describe('chat completions', () => {
    it('returns message.reasoning from a reasoning model, counted in reasoning_tokens', async () => {
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model: 'sim-reasoner',
        messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      });
      const message = completion.choices[0].message as any;
      expect(typeof message.reasoning).toBe('string');
      expect(message.reasoning.length).toBeGreaterThan(0);
      expect(message.reasoning).toContain('Why is the sky blue?');
      expect(message.reasoning_content).toBeUndefined();
      expect(message.content.length).toBeGreaterThan(0);
      expect(completion.usage!.completion_tokens_details!.reasoning_tokens).toBeGreaterThan(0);
      expect(completion.usage!.completion_tokens).toBeGreaterThan(completion.usage!.completion_tokens_details!.reasoning_tokens!);
    });

    it('also returns reasoning_content with reasoning_content_compat', async () => {
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model: 'sim-reasoner',
        messages: [{ role: 'user', content: 'Why is the sky blue?' }],
        reasoning_content_compat: true,
      } as any);
      const message = completion.choices[0].message as any;
      expect(message.reasoning_content).toBe(message.reasoning);
      expect(message.reasoning.length).toBeGreaterThan(0);
    });

    it('leaves reasoning out with the :reasoning-exclude suffix or reasoning: {exclude: true}, keeping the answer', async () => {
      const client = openaiClient(account.masterKey);
      const messages = [{ role: 'user' as const, content: 'Why is the sky blue?' }];
      const shown = await client.chat.completions.create({ model: 'sim-reasoner', messages });
      const suffixed = await client.chat.completions.create({ model: 'sim-reasoner:reasoning-exclude', messages });
      const excluded = await client.chat.completions.create({ model: 'sim-reasoner', messages, reasoning: { exclude: true } } as any);
      for (const completion of [suffixed, excluded]) {
        const message = completion.choices[0].message as any;
        expect(message).not.toHaveProperty('reasoning');
        expect(message).not.toHaveProperty('reasoning_content');
        expect(message.content).toBe(shown.choices[0].message.content);
        expect(completion.choices[0].finish_reason).toBe('stop');
      }
    });

    it('streams reasoning deltas before the content, and none when excluded', async () => {
      const client = openaiClient(account.masterKey);
      const messages = [{ role: 'user' as const, content: 'Think, then answer.' }];
      const collect = async (model: string, extra: Record<string, unknown> = {}) => {
        const stream = await client.chat.completions.create({ model, messages, stream: true, ...extra } as any);
        const chunks: ChatCompletionChunk[] = [];
        for await (const chunk of stream as any as AsyncIterable<ChatCompletionChunk>) chunks.push(chunk);
        const reasoning = chunks.map((chunk) => (chunk.choices[0]?.delta as any)?.reasoning ?? '').join('');
        const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
        const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta?.content);
        const lastReasoning = chunks.map((chunk) => Boolean((chunk.choices[0]?.delta as any)?.reasoning)).lastIndexOf(true);
        return { reasoning, content, firstContent, lastReasoning };
      };
      const whole = await client.chat.completions.create({ model: 'sim-reasoner', messages });
      const shown = await collect('sim-reasoner');
      expect(shown.reasoning).toBe((whole.choices[0].message as any).reasoning);
      expect(shown.content).toBe(whole.choices[0].message.content);
      expect(shown.lastReasoning).toBeGreaterThanOrEqual(0);
      expect(shown.lastReasoning).toBeLessThan(shown.firstContent);

      for (const hidden of [await collect('sim-reasoner:reasoning-exclude'), await collect('sim-reasoner', { reasoning: { exclude: true } })]) {
        expect(hidden.reasoning).toBe('');
        expect(hidden.content).toBe(shown.content);
      }
    });

    it.each([
      ['fake-openai-thinker', 'openai'],
      ['fake-anthropic-thinker', 'anthropic'],
    ] as const)("passes %s's upstream reasoning through as message.reasoning", async (model, kind) => {
      const mk = marker('think');
      const client = openaiClient(account.masterKey);
      const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Ponder ${mk}` }] });
      const message = completion.choices[0].message as any;
      expect(message.reasoning).toBe(`The user asked "Ponder ${mk}". I will think step by step and then answer briefly.`);
      expect(message.content).toContain(mk);
      expect((await fakeRequestsMentioning(kind, mk)).length).toBe(1);

      const excluded = await client.chat.completions.create({ model: `${model}:reasoning-exclude`, messages: [{ role: 'user', content: `Ponder ${mk}` }] });
      expect(excluded.choices[0].message).not.toHaveProperty('reasoning');
      expect(excluded.choices[0].message.content).toBe(message.content);
    });
  });

  describe('messages', () => {
    it('returns a signed thinking block before the text from a reasoning model', async () => {
      const message = await anthropicClient(account.masterKey).messages.create({
        model: 'sim-reasoner',
        max_tokens: 2000,
        messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      });
      expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      const thinking = message.content[0] as ThinkingBlock;
      expect(thinking.thinking).toContain('Why is the sky blue?');
      expect(thinking.signature).toMatch(/^sim-sig-[0-9a-f]{8}$/);
      expect(message.stop_reason).toBe('end_turn');
    });

    it('thinks on request (thinking: enabled) only on a model the catalog marks as reasoning', async () => {
      const client = anthropicClient(account.masterKey);
      const mk = marker('nothink');
      const messages = [{ role: 'user' as const, content: `Consider carefully ${mk}.` }];
      const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
      // sim-chat and fake-anthropic are not marked as reasoning: the request is served, without thinking.
      for (const model of ['sim-chat', 'fake-anthropic']) {
        const plain = await client.messages.create({ model, max_tokens: 3000, messages, thinking });
        expect(plain.content.map((block) => block.type)).toEqual(['text']);
      }
      expect((await fakeRequestsMentioning('anthropic', mk))[0].body).not.toHaveProperty('thinking');
      const thought = await client.messages.create({ model: 'fake-anthropic-thinker', max_tokens: 3000, messages, thinking });
      expect(thought.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      expect((thought.content[0] as ThinkingBlock).signature.length).toBeGreaterThan(0);
    });

    it("passes the upstream's thinking and signature through, streamed with signature_delta, and sends them back on the next turn", async () => {
      const mk = marker('sig');
      const client = anthropicClient(account.masterKey);
      const question = { role: 'user' as const, content: `Deliberate ${mk}` };
      const whole = await client.messages.create({ model: 'fake-anthropic-thinker', max_tokens: 2000, messages: [question] });
      expect(whole.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      expect(whole.content[0]).toEqual({
        type: 'thinking',
        thinking: `The user asked "Deliberate ${mk}". I will think step by step and then answer briefly.`,
        signature: FAKE_SIGNATURE,
      });

      const stream = client.messages.stream({ model: 'fake-anthropic-thinker', max_tokens: 2000, messages: [question] });
      const thinkingDeltas: string[] = [];
      const signatures: string[] = [];
      stream.on('thinking', (delta) => thinkingDeltas.push(delta));
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'signature_delta') signatures.push(event.delta.signature);
      });
      const final = await stream.finalMessage();
      expect(signatures).toEqual([FAKE_SIGNATURE]);
      expect(thinkingDeltas.length).toBeGreaterThan(1);
      expect(final.content[0]).toEqual(whole.content[0]);
      expect(thinkingDeltas.join('')).toBe((whole.content[0] as ThinkingBlock).thinking);

      await client.messages.create({
        model: 'fake-anthropic-thinker',
        max_tokens: 2000,
        messages: [question, { role: 'assistant', content: whole.content }, { role: 'user', content: 'And then?' }],
      });
      const sent = (await fakeRequestsMentioning('anthropic', mk)).at(-1)!.body;
      expect(sent.messages[1]).toEqual({ role: 'assistant', content: [whole.content[0], { type: 'text', text: (whole.content[1] as any).text }] });
    });

    it('refuses, before calling the upstream, thinking on an Anthropic model whose budget max_tokens cannot hold', async () => {
      const mk = marker('budget');
      const model = 'fake-anthropic-thinker';
      const client = anthropicClient(account.masterKey);
      for (const [maxTokens, budget] of [
        [500, 1024],
        [1500, 2000],
      ]) {
        const error = await client.messages
          .create({
            model,
            max_tokens: maxTokens,
            thinking: { type: 'enabled', budget_tokens: budget },
            messages: [{ role: 'user', content: `Think ${mk}` }],
          })
          .then(
            () => null,
            (caught: unknown) => caught as { status: number; error: any },
          );
        expect(error?.status).toBe(400);
        expect(error?.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } });
      }
      expect(await fakeRequestsMentioning('anthropic', mk)).toHaveLength(0);
      // With room past the budget it is served, within the client's max_tokens.
      const served = await client.messages.create({
        model,
        max_tokens: 1500,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: `Think ${mk}` }],
      });
      expect(served.usage.output_tokens).toBeLessThanOrEqual(1500);
      expect((await fakeRequestsMentioning('anthropic', mk)).at(-1)!.body).toMatchObject({
        max_tokens: 1500,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      });
    });

    it('leaves thinking out with the :reasoning-exclude suffix', async () => {
      const message = await anthropicClient(account.masterKey).messages.create({
        model: 'sim-reasoner:reasoning-exclude',
        max_tokens: 2000,
        messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      });
      expect(message.content.map((block) => block.type)).toEqual(['text']);
    });
  });

  describe('responses', () => {
    it('produces no reasoning item and no reasoning tokens from a model the catalog does not mark as reasoning, whatever reasoning asks', async () => {
      const client = openaiClient(account.masterKey);
      for (const reasoning of [{}, { effort: 'high' as const }, { effort: 'medium' as const, summary: 'auto' as const }]) {
        const response = await client.responses.create({ model: 'sim-chat', input: 'Why is the sky blue?', reasoning });
        expect(response.status).toBe('completed');
        expect(response.output.map((item) => item.type)).toEqual(['message']);
        expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(0);
        expect(response.reasoning?.effort).toBeNull();
      }
      const events: ResponseStreamEvent[] = [];
      for await (const event of await client.responses.create({ model: 'sim-chat', input: 'Think.', reasoning: {}, stream: true })) events.push(event);
      expect(events.filter((event) => event.type === 'response.output_item.added').map((event: any) => event.item.type)).toEqual(['message']);
      const chat = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Think.' }], reasoning_effort: 'high' });
      expect(chat.choices[0].message).not.toHaveProperty('reasoning');
      expect(chat.usage!.completion_tokens_details!.reasoning_tokens).toBe(0);
    });

    it('returns a reasoning item with a summary before the message when a summary is asked for', async () => {
      const response = await openaiClient(account.masterKey).responses.create({
        model: 'sim-reasoner',
        input: 'Why is the sky blue?',
        reasoning: { summary: 'auto' },
      });
      expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
      const reasoning = response.output[0] as any;
      expect(reasoning.id).toMatch(/^rs_/);
      expect(reasoning.summary).toHaveLength(1);
      expect(reasoning.summary[0].type).toBe('summary_text');
      expect(reasoning.summary[0].text).toContain('Why is the sky blue?');
      expect(response.output_text.length).toBeGreaterThan(0);
      expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
      expect(response.reasoning).toEqual({ effort: null, summary: 'auto' });
    });

    it('returns the reasoning item with summary: [] when no summary was asked for (as OpenAI does), still billing the reasoning', async () => {
      const client = openaiClient(account.masterKey);
      for (const reasoning of [undefined, { effort: 'high' as const }]) {
        const response = await client.responses.create({ model: 'sim-reasoner', input: 'Why is the sky blue?', ...(reasoning ? { reasoning } : {}) });
        expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
        expect(response.output[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] });
        expect(response.reasoning?.summary).toBeNull();
        expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
      }

      const events: ResponseStreamEvent[] = [];
      for await (const event of await client.responses.create({ model: 'sim-reasoner', input: 'Stream your thoughts.', stream: true })) events.push(event);
      expect(events.filter((event) => event.type.startsWith('response.reasoning_summary'))).toEqual([]);
      const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
      expect(completed.response.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
    });

    it('streams the reasoning summary as deltas that join to the final reasoning item', async () => {
      const stream = openaiClient(account.masterKey).responses.stream({
        model: 'sim-reasoner',
        input: 'Stream your thoughts.',
        reasoning: { summary: 'detailed' },
      });
      const deltas: string[] = [];
      stream.on('response.reasoning_summary_text.delta', (event: ResponseStreamEvent & { delta: string }) => deltas.push(event.delta));
      const final = await stream.finalResponse();
      expect(final.output[0].type).toBe('reasoning');
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe((final.output[0] as any).summary[0].text);
    });

    it('returns no reasoning item with the :reasoning-exclude suffix', async () => {
      const response = await openaiClient(account.masterKey).responses.create({ model: 'sim-reasoner:reasoning-exclude', input: 'Why is the sky blue?' });
      expect(response.output.map((item) => item.type)).toEqual(['message']);
      expect(response.output_text.length).toBeGreaterThan(0);
    });
  });
});
