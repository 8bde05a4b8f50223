/** Rules particular to `/v1/messages`: the system-role rule, continuing a partial reply, headers. */
import Anthropic from '@anthropic-ai/sdk';
import { api, createAccount, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker } from '../support/clients';
import { CONTINUATION } from '../support/fake-upstreams';

describe('messages format rules', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('refuses a system role at messages[0] with a 400 in Anthropic error shape naming the rule', async () => {
    const client = anthropicClient(account.masterKey);
    const error = await client.messages
      .create({
        model: 'sim-chat',
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello' },
        ] as any,
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const badRequest = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(badRequest.status).toBe(400);
    expect(badRequest.error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/messages\.0.*system.*top-level system field/) },
    });

    // The same over plain HTTP: exactly Anthropic's shape, no OpenAI fields.
    const raw = await api('POST', '/v1/messages', {
      headers: { 'x-api-key': account.masterKey },
      body: {
        model: 'sim-chat',
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      },
    });
    expect(raw.status).toBe(400);
    expect(Object.keys(raw.body).sort()).toEqual(['error', 'type']);
    expect(raw.body.type).toBe('error');
    expect(Object.keys(raw.body.error).sort()).toEqual(['message', 'type']);
  });

  it('accepts a system role later in the conversation (a mid-conversation instruction)', async () => {
    const message = await anthropicClient(account.masterKey).messages.create({
      model: 'sim-chat',
      max_tokens: 300,
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi there.' },
        { role: 'system', content: 'From now on, be terse.' },
        { role: 'user', content: 'Tell me more' },
      ] as any,
    });
    expect(message.type).toBe('message');
    expect(message.stop_reason).toBe('end_turn');
  });

  it('continues a final assistant message from the anthropic upstream: the reply is the continuation only', async () => {
    const mk = marker('prefill');
    const partial = `The answer to ${mk} is`;
    const message = await anthropicClient(account.masterKey).messages.create({
      model: 'fake-anthropic',
      max_tokens: 300,
      messages: [
        { role: 'user', content: `Finish my sentence about ${mk}` },
        { role: 'assistant', content: partial },
      ],
    });
    const [sent] = await fakeRequestsMentioning('anthropic', mk);
    // The partial reply reaches the provider as the last (assistant) turn, to be continued.
    expect(sent.body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: partial }] });
    expect(message.content).toEqual([{ type: 'text', text: CONTINUATION }]);
    expect(message.stop_reason).toBe('end_turn');
  });

  it('continues a final assistant message on the simulator: the reply carries on from the partial text instead of answering it', async () => {
    const partial = 'The three primary colours of light are';
    const client = anthropicClient(account.masterKey);
    const question = { role: 'user' as const, content: 'Name the three primary colours of light.' };
    const continued = await client.messages.create({
      model: 'sim-chat',
      max_tokens: 300,
      messages: [question, { role: 'assistant', content: partial }],
    });
    expect(continued.stop_reason).toBe('end_turn');
    const text = continued.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(text.length).toBeGreaterThan(0);
    // A continuation follows the partial text; it does not repeat it back or quote it as something "said" to the model.
    expect(text).not.toContain(partial);
    expect(text).not.toMatch(/^You said/);
  });

  it('accepts the partner-version header, and the key as x-api-key', async () => {
    const message = await anthropicClient(account.masterKey).messages.create(
      { model: 'sim-chat', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] },
      { headers: { 'partner-version': '2023-06-01' } },
    );
    expect(message.type).toBe('message');

    const raw = await api('POST', '/v1/messages', {
      headers: { 'x-api-key': account.masterKey, 'partner-version': '2024-10-22', 'anthropic-version': '2023-06-01' },
      body: { model: 'sim-chat', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(raw.status).toBe(200);
    expect(raw.body.type).toBe('message');
  });

  it('accepts x-api-key only on /v1/messages: the OpenAI-style routes want a bearer key', async () => {
    const raw = await api('POST', '/v1/chat/completions', {
      headers: { 'x-api-key': account.masterKey },
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(raw.status).toBe(401);
    expect(raw.body.error).toMatchObject({ type: 'authentication_error', message: expect.stringMatching(/Missing API key/) });
  });
});
