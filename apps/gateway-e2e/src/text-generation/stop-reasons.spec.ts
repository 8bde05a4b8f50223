/**
 * A reply cut short by the token limit, or ended by a stop string, reported in each format's own
 * terms: chat `finish_reason: length`, messages `stop_reason: max_tokens` / `stop_sequence`,
 * responses `status: incomplete` with `incomplete_details.reason: max_output_tokens`.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { createAccount, TestAccount } from '../support/api';
import { ADAPTER_MODELS, anthropicClient, openaiClient } from '../support/clients';

const LIMIT = 5;

describe.each(ADAPTER_MODELS)('the token limit through the $adapter adapter ($model)', ({ model }) => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  const prompt = 'Write a long answer about lighthouses and harbours';

  it('chat: finish_reason length, whole and streamed, with at most the limit in completion tokens', async () => {
    const client = openaiClient(account.masterKey);
    const messages = [{ role: 'user' as const, content: prompt }];
    const whole = await client.chat.completions.create({ model, messages, max_tokens: LIMIT });
    expect(whole.choices[0].finish_reason).toBe('length');
    expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(LIMIT);

    const stream = await client.chat.completions.create({ model, messages, max_tokens: LIMIT, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.flatMap((chunk) => (chunk.choices[0]?.finish_reason ? [chunk.choices[0].finish_reason] : []))).toEqual(['length']);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(whole.choices[0].message.content);
  });

  it('messages: stop_reason max_tokens, whole and streamed', async () => {
    const client = anthropicClient(account.masterKey);
    const messages = [{ role: 'user' as const, content: prompt }];
    const whole = await client.messages.create({ model, max_tokens: LIMIT, messages });
    expect(whole.stop_reason).toBe('max_tokens');
    expect(whole.stop_sequence).toBeNull();
    expect(whole.usage.output_tokens).toBeLessThanOrEqual(LIMIT);
    const final = await client.messages.stream({ model, max_tokens: LIMIT, messages }).finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.content).toEqual(whole.content);
  });

  it('responses: status incomplete with reason max_output_tokens, whole and streamed (response.incomplete)', async () => {
    const client = openaiClient(account.masterKey);
    const whole = await client.responses.create({ model, input: prompt, max_output_tokens: LIMIT });
    expect(whole.status).toBe('incomplete');
    expect(whole.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(whole.max_output_tokens).toBe(LIMIT);

    const stream = await client.responses.create({ model, input: prompt, max_output_tokens: LIMIT, stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.incomplete');
    expect((last as any).response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('')).toBe(whole.output_text);
  });
});

describe('stop sequences', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('messages: stop_reason stop_sequence naming the string, the text ending before it; chat: finish_reason stop', async () => {
    const client = anthropicClient(account.masterKey);
    const messages = [{ role: 'user' as const, content: 'Say something deterministic' }];
    const full = await client.messages.create({ model: 'sim-chat', max_tokens: 500, messages });
    const fullText = (full.content[0] as { text: string }).text;
    const word = fullText.split(' ')[5];
    const stopped = await client.messages.create({ model: 'sim-chat', max_tokens: 500, messages, stop_sequences: ['no such text', word] });
    expect(stopped.stop_reason).toBe('stop_sequence');
    expect(stopped.stop_sequence).toBe(word);
    expect((stopped.content[0] as { text: string }).text).toBe(fullText.slice(0, fullText.indexOf(word)));

    const chat = await openaiClient(account.masterKey).chat.completions.create({ model: 'sim-chat', messages, stop: [word] });
    expect(chat.choices[0].finish_reason).toBe('stop');
    expect(chat.choices[0].message.content).toBe(fullText.slice(0, fullText.indexOf(word)));
  });
});
