/**
 * Token counting through the official SDKs: `client.messages.countTokens` (Anthropic) and
 * `client.responses.inputTokens.count` (OpenAI). The simulator's models are counted by the
 * gateway's tokenizer; models on an upstream with a counting endpoint by that upstream (the fake
 * answers COUNT_BASE + words, so its count cannot be mistaken for ours). Nothing is metered.
 */
import { encode } from 'gpt-tokenizer';
import { api, createAccount, createDevPass, createProxyKey, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { COUNT_BASE } from '../support/fake-upstreams';
import { UsageWatcher } from '../support/usage-events';

const tokens = (text: string) => encode(text).length;

describe('token counting', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '10');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  it('messages.countTokens on a simulator model: the local count of system and messages, free and unmetered', async () => {
    const requestId = newRequestId('count-sim');
    const system = 'You are a careful assistant.';
    const question = 'How many tokens is this question?';
    const counted = await anthropicClient(account.masterKey).messages.countTokens(
      { model: 'sim-chat', system, messages: [{ role: 'user', content: question }] },
      withRequestId(requestId),
    );
    expect(counted).toEqual({ input_tokens: tokens(system) + tokens(question) });
    // The same count a generation reports at message_start and bills.
    const generationId = newRequestId('count-sim-gen');
    const stream = anthropicClient(account.masterKey).messages.stream(
      { model: 'sim-chat', max_tokens: 50, system, messages: [{ role: 'user', content: question }] },
      withRequestId(generationId),
    );
    let startInput: number | undefined;
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') startInput = event.message.usage.input_tokens;
    });
    await stream.finalMessage();
    expect(startInput).toBe(counted.input_tokens);
    // The generation after it has its usage event; the count, earlier, has none.
    expect((await usage.single(generationId)).inputTokens).toBe(counted.input_tokens);
    expect(usage.eventsFor(requestId)).toEqual([]);
  });

  it("messages.countTokens on an Anthropic upstream: the upstream's own count_tokens answers", async () => {
    const mk = marker('count');
    const counted = await anthropicClient(account.masterKey).messages.countTokens({
      model: 'fake-anthropic',
      system: 'Be brief.',
      messages: [{ role: 'user', content: `Count me ${mk}` }],
    });
    expect(counted.input_tokens).toBeGreaterThan(COUNT_BASE);
    const calls = (await fakeRequestsMentioning('anthropic', mk)).filter((request) => request.path === '/v1/messages/count_tokens');
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toMatchObject({
      model: 'echo',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: `Count me ${mk}` }] }],
    });
    expect(calls[0].body).not.toHaveProperty('max_tokens');
    // Nothing was generated.
    expect((await fakeRequestsMentioning('anthropic', mk)).filter((request) => request.path === '/v1/messages')).toEqual([]);
  });

  it("responses.inputTokens.count: the local count on the simulator, the OpenAI upstream's own on a fake-openai model", async () => {
    const client = openaiClient(account.masterKey);
    const local = await client.responses.inputTokens.count({ model: 'sim-chat', instructions: 'Answer in French.', input: 'Where is the library?' });
    expect(local).toEqual({ object: 'response.input_tokens', input_tokens: tokens('Answer in French.') + tokens('Where is the library?') });

    const mk = marker('rcount');
    const upstream = await client.responses.inputTokens.count({ model: 'fake-openai', input: `Count this too ${mk}` });
    expect(upstream.object).toBe('response.input_tokens');
    expect(upstream.input_tokens).toBeGreaterThan(COUNT_BASE);
    const calls = (await fakeRequestsMentioning('openai', mk)).filter((request) => request.path === '/v1/responses/input_tokens');
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toMatchObject({ model: 'echo', input: [{ role: 'user', content: [{ type: 'input_text', text: `Count this too ${mk}` }] }] });
  });

  it('responses.inputTokens.count with previous_response_id counts the stored turns it continues; an unknown id is a 404', async () => {
    const client = openaiClient(account.masterKey);
    const first = await client.responses.create({ model: 'sim-chat', input: 'Name three rivers of Europe.' });
    const alone = await client.responses.inputTokens.count({ model: 'sim-chat', input: 'And their lengths?' });
    const continued = await client.responses.inputTokens.count({ model: 'sim-chat', input: 'And their lengths?', previous_response_id: first.id });
    expect(continued.input_tokens).toBeGreaterThan(alone.input_tokens + tokens('Name three rivers of Europe.') - 1);
    const unknown = await api('POST', '/v1/responses/input_tokens', {
      key: account.masterKey,
      body: { model: 'sim-chat', input: 'hi', previous_response_id: 'resp_0000000000000000000000000000dead' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe('previous_response_id');
  });

  it('has the same key and model checks as generation, in each format', async () => {
    const anthropic = await api('POST', '/v1/messages/count_tokens', {
      headers: { 'x-api-key': 'ek-not-a-real-key' },
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(anthropic.status).toBe(401);
    expect(anthropic.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const unknown = await api('POST', '/v1/messages/count_tokens', {
      key: account.masterKey,
      body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });

    const invalid = await api('POST', '/v1/messages/count_tokens', { key: account.masterKey, body: { model: 'sim-chat', messages: [] } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'] });
    const barred = await api('POST', '/v1/responses/input_tokens', { key: proxy.key, body: { model: 'fake-openai', input: 'hi' } });
    expect(barred.status).toBe(403);
    expect(barred.body.error).toMatchObject({ param: 'model' });

    const devPass = createDevPass(account.accountId);
    const dev = await anthropicClient(devPass).messages.countTokens({ model: 'sim-coder:dev', messages: [{ role: 'user', content: 'hello' }] });
    expect(dev.input_tokens).toBe(tokens('hello'));
  });
});
