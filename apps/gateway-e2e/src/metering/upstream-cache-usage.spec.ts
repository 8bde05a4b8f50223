/**
 * Prompt-cache tokens reported by the upstreams reach each format's usage as that format defines
 * it, the usage event and the ledger, priced at the model's cache prices; a cancelled Anthropic
 * stream is billed the input the upstream reported in `message_start`.
 */
import { createAccount, ledgerEntry, TestAccount } from '../support/api';
import { anthropicClient, marker, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { CACHE_READ_TOKENS, CACHE_WRITE_TOKENS, REPORTED_INPUT_TOKENS } from '../support/fake-upstreams';
import { UsageWatcher } from '../support/usage-events';

// fake-*-cached in the e2e catalog (global-setup.ts), credits per million tokens.
const PRICE = { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 };

const cost = (uncached: number, read: number, written: number, output: number) =>
  (uncached * PRICE.input + read * PRICE.cache_read + written * PRICE.cache_write + output * PRICE.output) / 1_000_000;

describe('usage and billing of prompt-cache tokens from the upstreams', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  describe('Anthropic upstream (cache reads and writes)', () => {
    it('Messages: input_tokens excludes the cache counters, whole and streamed; the ledger prices each at its price', async () => {
      const messages = [{ role: 'user' as const, content: `Cached prompt ${marker()}` }];
      const { data: message, response } = await anthropicClient(account.masterKey)
        .messages.create({ model: 'fake-anthropic-cached', max_tokens: 100, messages })
        .withResponse();
      const input = message.usage.input_tokens;
      expect(input).toBeGreaterThan(0);
      expect(message.usage).toMatchObject({ cache_read_input_tokens: CACHE_READ_TOKENS, cache_creation_input_tokens: CACHE_WRITE_TOKENS });

      const entry = await ledgerEntry(account.masterKey, response.headers.get('x-request-id')!);
      expect(entry).toMatchObject({
        model: 'fake-anthropic-cached',
        input_tokens: input + CACHE_READ_TOKENS + CACHE_WRITE_TOKENS,
        cache_read_input_tokens: CACHE_READ_TOKENS,
        cache_creation_input_tokens: CACHE_WRITE_TOKENS,
        output_tokens: message.usage.output_tokens,
      });
      expect(entry.credits).toBeCloseTo(cost(input, CACHE_READ_TOKENS, CACHE_WRITE_TOKENS, message.usage.output_tokens), 12);

      const stream = anthropicClient(account.masterKey).messages.stream({ model: 'fake-anthropic-cached', max_tokens: 100, messages });
      let started: Record<string, unknown> | undefined;
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_start') started = { ...event.message.usage };
      });
      const final = await stream.finalMessage();
      expect(started).toMatchObject({ input_tokens: input, cache_read_input_tokens: CACHE_READ_TOKENS, cache_creation_input_tokens: CACHE_WRITE_TOKENS });
      expect(final.usage).toMatchObject({ input_tokens: input, cache_read_input_tokens: CACHE_READ_TOKENS, cache_creation_input_tokens: CACHE_WRITE_TOKENS });
    });

    it('chat and responses: the whole prompt as input, the cache reads as cached_tokens', async () => {
      const content = `Cached for OpenAI clients ${marker()}`;
      const anthropic = await anthropicClient(account.masterKey).messages.create({
        model: 'fake-anthropic-cached',
        max_tokens: 100,
        messages: [{ role: 'user', content }],
      });
      const whole = anthropic.usage.input_tokens + CACHE_READ_TOKENS + CACHE_WRITE_TOKENS;
      const chat = await openaiClient(account.masterKey).chat.completions.create({ model: 'fake-anthropic-cached', messages: [{ role: 'user', content }] });
      expect(chat.usage).toMatchObject({ prompt_tokens: whole, prompt_tokens_details: { cached_tokens: CACHE_READ_TOKENS } });
      const responses = await openaiClient(account.masterKey).responses.create({ model: 'fake-anthropic-cached', input: content });
      expect(responses.usage).toMatchObject({ input_tokens: whole, input_tokens_details: { cached_tokens: CACHE_READ_TOKENS } });
    });
  });

  describe('OpenAI upstream (cache reads)', () => {
    it('every format shows the cache reads as it defines them; the ledger prices them at cache_read', async () => {
      const content = `Cached on OpenAI ${marker()}`;
      const { data: chat, response } = await openaiClient(account.masterKey)
        .chat.completions.create({ model: 'fake-openai-cached', messages: [{ role: 'user', content }] })
        .withResponse();
      const prompt = chat.usage!.prompt_tokens;
      expect(prompt).toBeGreaterThan(CACHE_READ_TOKENS);
      expect(chat.usage!.prompt_tokens_details).toEqual({ cached_tokens: CACHE_READ_TOKENS });
      const entry = await ledgerEntry(account.masterKey, response.headers.get('x-request-id')!);
      expect(entry).toMatchObject({ input_tokens: prompt, cache_read_input_tokens: CACHE_READ_TOKENS, cache_creation_input_tokens: 0 });
      expect(entry.credits).toBeCloseTo(cost(prompt - CACHE_READ_TOKENS, CACHE_READ_TOKENS, 0, chat.usage!.completion_tokens), 12);

      const streamed = await openaiClient(account.masterKey).chat.completions.create({
        model: 'fake-openai-cached',
        messages: [{ role: 'user', content }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let last: any;
      for await (const chunk of streamed) if (chunk.usage) last = chunk.usage;
      expect(last).toMatchObject({ prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: CACHE_READ_TOKENS } });

      const responses = await openaiClient(account.masterKey).responses.create({ model: 'fake-openai-cached', input: content });
      expect(responses.usage!.input_tokens_details).toEqual({ cached_tokens: CACHE_READ_TOKENS });

      const message = await anthropicClient(account.masterKey).messages.create({
        model: 'fake-openai-cached',
        max_tokens: 100,
        messages: [{ role: 'user', content }],
      });
      expect(message.usage).toMatchObject({
        input_tokens: prompt - CACHE_READ_TOKENS,
        cache_read_input_tokens: CACHE_READ_TOKENS,
        cache_creation_input_tokens: 0,
      });
    });
  });

  it('a streamed message_start carries the real input count on an Anthropic upstream, never 0', async () => {
    const stream = anthropicClient(account.masterKey).messages.stream({
      model: 'fake-anthropic',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'How long is this?' }],
    });
    let startInput = 0;
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') startInput = event.message.usage.input_tokens;
    });
    const final = await stream.finalMessage();
    expect(startInput).toBeGreaterThan(0);
    expect(startInput).toBe(final.usage.input_tokens);
  });

  // Anthropic: the input message_start reported; OpenAI reports usage only at the end, so the gateway's own count.
  it.each([
    ['fake-anthropic-big-input', REPORTED_INPUT_TOKENS],
    ['fake-openai-big-input', undefined],
  ] as const)('%s: a cancelled stream is billed the reported input (%s), else the counted one, plus the output so far', async (model, expectedInput) => {
    const requestId = newRequestId('cancel-billed');
    const prompt = 'Tell me a long story slowly';
    const stream = anthropicClient(account.masterKey).messages.stream(
      { model, max_tokens: 500, messages: [{ role: 'user', content: prompt }] },
      withRequestId(requestId),
    );
    let deltas = 0;
    await new Promise<void>((resolve) => {
      stream.on('text', () => {
        if (++deltas === 3) {
          stream.abort();
          resolve();
        }
      });
      stream.on('end', () => resolve());
    });
    await stream.done().catch(() => undefined);
    // Deltas that arrived in the same chunk as the third are still emitted after abort().
    expect(deltas).toBeGreaterThanOrEqual(3);
    const event = await usage.single(requestId);
    expect(event.status).toBe('cancelled');
    expect(event.outputTokens).toBeGreaterThan(0);
    if (expectedInput !== undefined) expect(event.inputTokens).toBe(expectedInput);
    else expect(event.inputTokens).not.toBe(REPORTED_INPUT_TOKENS);
    const entry = await ledgerEntry(account.masterKey, event.requestId);
    expect(entry).toMatchObject({ status: 'cancelled', input_tokens: event.inputTokens, output_tokens: event.outputTokens });
  });
});
