import { encode } from 'gpt-tokenizer';
import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { canonicalRequest, userText, weatherTool } from '../testing/canonical-fixtures';
import { collect } from '../testing/fake-upstream';
import { SimulatorAdapter, simulatorTokenLogprobs } from './simulator.adapter';

const route: UpstreamRoute = { adapter: 'simulator', upstreamModel: 'sim-chat' };
const tokens = (text: string) => encode(text).length;
const signal = () => new AbortController().signal;

/** Everything but the per-call id and timestamp. */
const stable = (response: CanonicalResponse): CanonicalResponse => ({ ...response, id: '', created: 0 });

/** Rebuilds a response from stream events, to compare with `complete()`. */
function assemble(events: CanonicalStreamEvent[]) {
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  let text = '';
  let reasoning = '';
  for (const event of events) {
    if (event.type === 'text_delta') text += event.text;
    if (event.type === 'reasoning_delta') reasoning += event.text;
    if (event.type === 'tool_call_start') toolCalls[event.index] = { id: event.id, name: event.name, arguments: '' };
    if (event.type === 'tool_call_delta') toolCalls[event.index].arguments += event.argumentsDelta;
  }
  return { text, reasoning, toolCalls };
}

describe('SimulatorAdapter', () => {
  const simulator = new SimulatorAdapter();
  const complete = (request: CanonicalRequest, on: UpstreamRoute = route) => simulator.complete(on, request, signal());

  describe('replies', () => {
    it('is deterministic, echoes the prompt, and differs with the input', async () => {
      const request = canonicalRequest({ messages: [userText('Tell me about lighthouses on the coast')] });
      const first = await complete(request);
      expect(stable(await complete(request))).toEqual(stable(first));
      expect(first.text).toContain('"Tell me about lighthouses on the coast"');
      expect(first).toMatchObject({ model: 'public-model', stopReason: 'stop', toolCalls: [] });
      const other = await complete(canonicalRequest({ messages: [userText('Something else entirely')] }));
      expect(other.text).not.toEqual(first.text);
      expect((await complete(request, { ...route, upstreamModel: 'sim-other' })).text).not.toEqual(first.text);
    });

    it('counts input and output tokens exactly as gpt-tokenizer does', async () => {
      const request = canonicalRequest({
        system: 'You are terse.',
        messages: [userText('First question'), { role: 'assistant', content: [{ type: 'text', text: 'First answer' }] }, userText('Second question')],
      });
      const response = await complete(request);
      expect(response.usage).toEqual({
        inputTokens: tokens('You are terse.') + tokens('First question') + tokens('First answer') + tokens('Second question'),
        outputTokens: tokens(response.text),
      });
    });

    it('truncates to maxTokens and stops with length', async () => {
      const request = canonicalRequest({ messages: [userText('Write a long story')] });
      const full = await complete(request);
      const truncated = await complete({ ...request, maxTokens: 5 });
      expect(truncated.stopReason).toBe('length');
      expect(truncated.usage.outputTokens).toBe(5);
      expect(tokens(truncated.text)).toBe(5);
      expect(full.text.startsWith(truncated.text)).toBe(true);
      expect((await complete({ ...request, maxTokens: full.usage.outputTokens })).stopReason).toBe('stop');
    });

    it('truncates a reply of tens of thousands of words to maxTokens, keeping the longest prefix that fits', async () => {
      const long = new SimulatorAdapter({ replyWords: 50_000 });
      const request = canonicalRequest({ messages: [userText('Write a very long story')] });
      const full = await long.complete(route, request, new AbortController().signal);
      const budget = Math.floor(full.usage.outputTokens / 2);
      const truncated = await long.complete(route, { ...request, maxTokens: budget }, new AbortController().signal);
      expect(truncated.stopReason).toBe('length');
      expect(full.text.startsWith(truncated.text)).toBe(true);
      expect(truncated.usage.outputTokens).toBe(tokens(truncated.text));
      expect(truncated.usage.outputTokens).toBeLessThanOrEqual(budget);
      // A piece is a token or a few: the prefix stops within one of the budget.
      expect(truncated.usage.outputTokens).toBeGreaterThan(budget - 4);
    });

    it('stops before a stop string', async () => {
      const request = canonicalRequest({ messages: [userText('Say something')] });
      const full = await complete(request);
      const word = full.text.split(' ')[4];
      const stopped = await complete({ ...request, stop: ['no such text', word] });
      expect(stopped).toMatchObject({ stopReason: 'stop_sequence', stopSequence: word, text: full.text.slice(0, full.text.indexOf(word)) });
      expect(stopped.usage.outputTokens).toBe(tokens(stopped.text));
    });

    it('answers a tool result by mentioning it', async () => {
      const response = await complete(
        canonicalRequest({
          tools: [weatherTool],
          messages: [
            userText('What is the weather in Oslo? Use the tool.'),
            { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
            { role: 'tool', toolCallId: 'call_1', content: 'Cloudy, 4 degrees' },
          ],
        }),
      );
      expect(response).toMatchObject({ stopReason: 'stop', toolCalls: [] });
      expect(response.text).toContain('The get_weather tool returned: "Cloudy, 4 degrees"');
    });

    it('answers the user, not a system message appended after the user turn (as Claude Code sends)', async () => {
      const response = await complete(
        canonicalRequest({
          tools: [weatherTool],
          messages: [userText('Check get_weather for Oslo'), { role: 'system', content: 'Reminder: be concise and careful.' }],
        }),
      );
      expect(response).toMatchObject({ stopReason: 'tool_calls', toolCalls: [expect.objectContaining({ name: 'get_weather' })] });
      const plain = await complete(
        canonicalRequest({ messages: [userText('Tell me about lighthouses'), { role: 'system', content: 'Reminder: be concise.' }] }),
      );
      expect(plain.text).toContain('You said: "Tell me about lighthouses"');
      expect(plain.text).not.toContain('Reminder');
    });

    it('answers a tool result in text, even with user text (a reminder naming the tool) beside it', async () => {
      const response = await complete(
        canonicalRequest({
          tools: [weatherTool],
          messages: [
            userText('What is the weather in Oslo? Use the get_weather tool.'),
            { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
            { role: 'tool', toolCallId: 'call_1', content: 'Cloudy, 4 degrees' },
            userText('<reminder>the get_weather tool is available</reminder>'),
            { role: 'system', content: 'Stay on task.' },
          ],
        }),
      );
      expect(response).toMatchObject({ stopReason: 'stop', toolCalls: [] });
      expect(response.text).toContain('The get_weather tool returned: "Cloudy, 4 degrees"');
    });
  });

  describe('tool calls', () => {
    const ask = (text: string, extra: Partial<CanonicalRequest> = {}) =>
      complete(
        canonicalRequest({
          tools: [
            weatherTool,
            { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string', format: 'date-time' } }, required: ['zone'] } },
          ],
          messages: [userText(text)],
          ...extra,
        }),
      );

    it('calls the first tool when the user asks for a tool, with arguments from its schema', async () => {
      const response = await ask('Please use a tool to check Paris');
      expect(response.stopReason).toBe('tool_calls');
      expect(response.toolCalls).toHaveLength(1);
      expect(response.toolCalls[0]).toMatchObject({ id: expect.stringMatching(/^call_sim_[0-9a-f]{8}$/), name: 'get_weather' });
      const args = JSON.parse(response.toolCalls[0].arguments) as Record<string, unknown>;
      // Only what the schema requires: city (unit and days are optional).
      expect(args).toEqual({ city: 'sample city' });
      expect(response.usage.outputTokens).toBe(tokens(response.text) + tokens('get_weather') + tokens(response.toolCalls[0].arguments));
      expect(stable(await ask('Please use a tool to check Paris'))).toEqual(stable(response));
    });

    it('calls the tools the message names, or the forced one', async () => {
      expect((await ask('What does get_time say?')).toolCalls.map((call) => call.name)).toEqual(['get_time']);
      expect(JSON.parse((await ask('get_time now')).toolCalls[0].arguments)).toEqual({ zone: '2025-01-01T00:00:00Z' });
      expect((await ask('Hello', { toolChoice: 'required' })).toolCalls.map((call) => call.name)).toEqual(['get_weather']);
      expect((await ask('Hello', { toolChoice: { name: 'get_time' } })).toolCalls.map((call) => call.name)).toEqual(['get_time']);
    });

    it("fills a tool's required arguments only, each of its declared type, nested ones too", async () => {
      // Shaped after Claude Code's Read and Codex's exec_command, whose tools refuse a sample `pages` or a fractional number.
      const read = {
        name: 'Read',
        parameters: {
          type: 'object',
          properties: { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' }, pages: { type: 'string' } },
          required: ['file_path'],
          additionalProperties: false,
        },
      };
      const exec = {
        name: 'exec_command',
        parameters: {
          type: 'object',
          properties: {
            cmd: { type: 'string' },
            yield_time_ms: { type: 'number' },
            max_output_tokens: { type: 'integer', minimum: 1 },
            sandbox: { type: 'string', enum: ['read-only', 'workspace-write'] },
            env: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } }, required: ['name'] },
            paths: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, mode: { type: 'integer' } }, required: ['path'] } },
            justification: { type: 'string' },
          },
          required: ['cmd', 'yield_time_ms', 'max_output_tokens', 'sandbox', 'env', 'paths'],
        },
      };
      const call = async (tool: { name: string; parameters: Record<string, unknown> }) =>
        JSON.parse((await complete(canonicalRequest({ tools: [tool], toolChoice: { name: tool.name }, messages: [userText('go')] }))).toolCalls[0].arguments);
      expect(await call(read)).toEqual({ file_path: 'sample file_path' });
      const args = await call(exec);
      expect(args).toEqual({
        cmd: 'sample cmd',
        yield_time_ms: expect.any(Number),
        max_output_tokens: expect.any(Number),
        sandbox: 'read-only',
        env: { name: 'sample name' },
        paths: [{ path: 'sample path' }],
      });
      expect(Number.isInteger(args.yield_time_ms)).toBe(true);
      expect(Number.isInteger(args.max_output_tokens)).toBe(true);
      expect(args.max_output_tokens).toBeGreaterThanOrEqual(1);
    });

    it('does not call tools unless asked, or when tool choice is none', async () => {
      expect(await ask('Just chat with me')).toMatchObject({ toolCalls: [], stopReason: 'stop' });
      expect(await ask('Use the tool', { toolChoice: 'none' })).toMatchObject({ toolCalls: [], stopReason: 'stop' });
      expect((await complete(canonicalRequest({ messages: [userText('Use the tool')] }))).toolCalls).toEqual([]);
    });
  });

  describe('reasoning', () => {
    const reasoning = { enabled: true, exclude: false };

    it('reasons with a signature when enabled, counting reasoning as output', async () => {
      const response = await complete(canonicalRequest({ reasoning, messages: [userText('Why is the sky blue?')] }));
      expect(response.reasoning).toContain('"Why is the sky blue?"');
      expect(response.reasoningSignature).toMatch(/^sim-sig-[0-9a-f]{8}$/);
      expect(response.usage).toMatchObject({ outputTokens: tokens(response.text) + tokens(response.reasoning!), reasoningTokens: tokens(response.reasoning!) });
      expect((await complete(canonicalRequest({ messages: [userText('Why is the sky blue?')] }))).reasoning).toBeUndefined();
    });

    it('keeps reasoning within its budget, and spends maxTokens on reasoning first', async () => {
      const budgeted = await complete(canonicalRequest({ reasoning: { ...reasoning, budgetTokens: 6 } }));
      expect(tokens(budgeted.reasoning!)).toBeLessThanOrEqual(6);
      expect(budgeted.stopReason).toBe('stop');
      const cut = await complete(canonicalRequest({ reasoning, maxTokens: 4 }));
      expect(cut).toMatchObject({ text: '', stopReason: 'length', usage: { outputTokens: 4, reasoningTokens: 4 } });
    });

    it('always reasons on a route with always_reason', async () => {
      const response = await complete(canonicalRequest(), { ...route, options: { always_reason: true } });
      expect(response.reasoning).toBeTruthy();
    });
  });

  describe('logprobs', () => {
    it('gives one deterministic entry per emitted token, with alternatives when asked', async () => {
      const request = canonicalRequest({ logprobs: true, topLogprobs: 3 });
      const response = await complete(request);
      const logprobs = response.logprobs!;
      expect(logprobs.map((entry) => entry.token).join('')).toBe(response.text);
      expect(logprobs).toHaveLength(tokens(response.text));
      for (const entry of logprobs) {
        expect(entry.logprob).toBeLessThanOrEqual(0);
        expect(entry.topLogprobs).toHaveLength(3);
        expect(entry.topLogprobs!.map((top) => top.token)).toContain(entry.token);
        expect(entry.topLogprobs!.every((top) => top.logprob <= 0)).toBe(true);
        expect(entry.topLogprobs!.reduce((sum, top) => sum + Math.exp(top.logprob), 0)).toBeLessThanOrEqual(1.0001);
      }
      expect((await complete(request)).logprobs).toEqual(logprobs);
      expect((await complete(canonicalRequest({ logprobs: true }))).logprobs![0].topLogprobs).toBeUndefined();
      expect((await complete(canonicalRequest())).logprobs).toBeUndefined();
    });
  });

  describe('decision prompts', () => {
    const decisionPrompt = (labels: string) => userText(`Facts: {"a":1}\nQuestion: is it?\nOptions:\n...\n\nAnswer with exactly one of: ${labels}`);

    it('answers one token with logprobs by the most likely label, ranked by simulatorTokenLogprobs', async () => {
      const request = canonicalRequest({ messages: [decisionPrompt('1, 2, 3')], maxTokens: 1, logprobs: true, topLogprobs: 20 });
      const prompt = (request.messages[0] as { content: { text: string }[] }).content[0].text;
      const expected = simulatorTokenLogprobs(prompt, ['1', '2', '3']);
      const response = await complete(request);
      expect(response).toMatchObject({ text: expected[0].token, stopReason: 'length', toolCalls: [], usage: { outputTokens: 1 } });
      expect(response.logprobs).toEqual([{ token: expected[0].token, logprob: expected[0].logprob, topLogprobs: expected }]);
      expect(stable(await complete(request))).toEqual(stable(response));
      // The same labels after another prompt: another (deterministic) distribution.
      const yesNo = await complete({ ...request, messages: [decisionPrompt('yes, no')] });
      expect(['yes', 'no']).toContain(yesNo.text);
      expect(yesNo.logprobs![0].topLogprobs!.map((entry) => entry.token).sort()).toEqual(['no', 'yes']);
      // topLogprobs cuts the ranking; without it only the chosen token's logprob.
      expect((await complete({ ...request, topLogprobs: 2 })).logprobs![0].topLogprobs).toEqual(expected.slice(0, 2));
      expect((await complete({ ...request, topLogprobs: undefined })).logprobs).toEqual([{ token: expected[0].token, logprob: expected[0].logprob }]);
    });

    it('replies as usual without logprobs, with more than one token, or without an answer line', async () => {
      const prompt = decisionPrompt('yes, no');
      for (const request of [
        canonicalRequest({ messages: [prompt], maxTokens: 1 }),
        canonicalRequest({ messages: [prompt], maxTokens: 5, logprobs: true }),
        canonicalRequest({ messages: [userText('Answer with one of: yes, no')], maxTokens: 1, logprobs: true }),
      ]) {
        const response = await complete(request);
        const full = await complete({ ...request, maxTokens: undefined, logprobs: undefined });
        expect(full.text).toMatch(/^You said/);
        expect(full.text.startsWith(response.text)).toBe(true);
        expect(['yes', 'no']).not.toContain(response.text);
      }
    });
  });

  describe('streaming', () => {
    it('streams token by token what complete() returns, in canonical order', async () => {
      const request = canonicalRequest({
        tools: [weatherTool],
        reasoning: { enabled: true, exclude: false },
        logprobs: true,
        messages: [userText('Use the tool for Paris 🎉')],
      });
      const response = await complete(request);
      const events = await collect(simulator.stream(route, request, signal()));
      expect(assemble(events)).toEqual({ text: response.text, reasoning: response.reasoning, toolCalls: response.toolCalls });
      const types = [...new Set(events.map((event) => event.type))];
      expect(types).toEqual(['start', 'reasoning_delta', 'reasoning_signature', 'text_delta', 'tool_call_start', 'tool_call_delta', 'finish', 'usage']);
      expect(events.filter((event) => event.type === 'text_delta')).toHaveLength(tokens(response.text));
      expect(events.find((event) => event.type === 'reasoning_signature')).toEqual({ type: 'reasoning_signature', signature: response.reasoningSignature });
      expect(events.at(-2)).toEqual({ type: 'finish', stopReason: 'tool_calls' });
      expect(events.at(-1)).toEqual({ type: 'usage', usage: response.usage });
      const textDeltas = events.filter((event): event is Extract<CanonicalStreamEvent, { type: 'text_delta' }> => event.type === 'text_delta');
      expect(textDeltas.flatMap((event) => event.logprobs ?? [])).toEqual(response.logprobs);
    });

    it('keeps multi-byte characters whole', async () => {
      const request = canonicalRequest({ messages: [userText('日本語 🎉🎉 emoji')] });
      const events = await collect(simulator.stream(route, request, signal()));
      const deltas = events.flatMap((event) => (event.type === 'text_delta' ? [event.text] : []));
      expect(deltas.some((text) => text.includes('\uFFFD'))).toBe(false);
      expect(deltas.join('')).toBe((await complete(request)).text);
    });

    it('reports the stop sequence and maxTokens length in the finish event', async () => {
      const events = await collect(simulator.stream(route, canonicalRequest({ maxTokens: 3 }), signal()));
      expect(events.filter((event) => event.type === 'text_delta')).toHaveLength(3);
      expect(events.at(-2)).toEqual({ type: 'finish', stopReason: 'length' });
      const stopped = await collect(simulator.stream(route, canonicalRequest({ stop: ['said'] }), signal()));
      expect(stopped.at(-2)).toEqual({ type: 'finish', stopReason: 'stop_sequence', stopSequence: 'said' });
    });

    it('paces tokens and stops promptly on abort, emitting nothing after it', async () => {
      const paced = new SimulatorAdapter({ tokenDelayMs: 1000 });
      const controller = new AbortController();
      const reason = new Error('client disconnected');
      const seen: CanonicalStreamEvent[] = [];
      const started = Date.now();
      const run = (async () => {
        // The route option overrides the constructor's 1 s per token.
        for await (const event of paced.stream({ ...route, options: { tokenDelayMs: 15 } }, canonicalRequest(), controller.signal)) {
          seen.push(event);
          if (seen.length === 3) setTimeout(() => controller.abort(reason), 5);
        }
      })();
      await expect(run).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(500);
      const count = seen.length;
      expect(count).toBeGreaterThanOrEqual(3);
      expect(count).toBeLessThan(6);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(seen).toHaveLength(count);
    });

    it('rejects at once when already aborted, and a timeout signal becomes a retryable UpstreamError', async () => {
      const controller = new AbortController();
      controller.abort(new Error('gone'));
      await expect(collect(simulator.stream(route, canonicalRequest(), controller.signal))).rejects.toThrow('gone');
      const slow = new SimulatorAdapter({ tokenDelayMs: 1000 });
      await expect(slow.complete(route, canonicalRequest(), AbortSignal.timeout(30))).rejects.toMatchObject({ status: 0, retryable: true });
    });
  });

  it('fails as configured, to exercise retries and fallbacks', async () => {
    const failing = { ...route, options: { fail_status: 503 } };
    await expect(complete(canonicalRequest(), failing)).rejects.toEqual(expect.objectContaining({ status: 503, retryable: true }));
    await expect(collect(simulator.stream({ ...route, options: { failStatus: 400 } }, canonicalRequest(), signal()))).rejects.toBeInstanceOf(UpstreamError);
  });

  it('merges options: route over constructor over defaults', () => {
    const adapter = new SimulatorAdapter({ tokenDelayMs: 20 });
    expect(adapter.optionsFor(route)).toEqual({ tokenDelayMs: 20, alwaysReason: false, replyWords: undefined, failStatus: undefined });
    expect(adapter.optionsFor({ ...route, options: { token_delay_ms: '5', replyWords: 3, alwaysReason: 'true' } })).toMatchObject({
      tokenDelayMs: 5,
      replyWords: 3,
      alwaysReason: true,
    });
  });
});

describe('simulatorTokenLogprobs', () => {
  it('is a deterministic distribution over the candidates, most likely first', () => {
    const result = simulatorTokenLogprobs('Is this spam? Answer yes or no.', ['yes', 'no', 'maybe', 'no']);
    expect(result.map((entry) => entry.token).sort()).toEqual(['maybe', 'no', 'yes']);
    expect(result.every((entry) => entry.logprob <= 0)).toBe(true);
    expect(result.reduce((sum, entry) => sum + Math.exp(entry.logprob), 0)).toBeCloseTo(1, 10);
    expect(result[0].logprob).toBeGreaterThanOrEqual(result[1].logprob);
    expect(simulatorTokenLogprobs('Is this spam? Answer yes or no.', ['maybe', 'no', 'yes'])).toEqual(result);
    const prompts = Array.from({ length: 20 }, (_, i) => `prompt ${i}`);
    const winners = new Set(prompts.map((prompt) => simulatorTokenLogprobs(prompt, ['yes', 'no'])[0].token));
    expect(winners).toEqual(new Set(['yes', 'no']));
    expect(simulatorTokenLogprobs('x', [])).toEqual([]);
    expect(simulatorTokenLogprobs('x', ['only'])).toEqual([{ token: 'only', logprob: 0 }]);
  });
});
