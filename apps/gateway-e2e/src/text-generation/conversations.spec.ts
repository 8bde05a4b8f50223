/**
 * The Conversations API through the official `openai` SDK, as `openai.conversations.*` and the
 * Agents SDK's conversation sessions use it: conversations and their items are created, listed,
 * read and deleted, `responses.create({conversation})` sees the conversation's items and appends
 * its turn to it, and a conversation is its account's only.
 */
import OpenAI from 'openai';
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { marker, openaiClient, responsesWeatherTool } from '../support/clients';

async function rejected<E>(call: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}

/** What a user of the SDK sees of each item: its type and, for messages, role and text. */
function summary(items: { type: string; role?: string; content?: unknown }[]): string[] {
  return items.map((item) => {
    if (item.type !== 'message') return item.type;
    const parts = Array.isArray(item.content) ? (item.content as { text?: string }[]) : [];
    return `${item.role}:${parts.map((part) => part.text ?? '').join('')}`;
  });
}

describe('conversations', () => {
  let account: TestAccount;
  let client: OpenAI;

  beforeAll(() => {
    account = createAccount('pro', '100');
    client = openaiClient(account.masterKey);
  });

  it('creates a conversation with items and metadata, reads it back, updates and deletes it', async () => {
    const created = await client.conversations.create({ metadata: { topic: 'demo' }, items: [{ type: 'message', role: 'user', content: 'Hello!' }] });
    expect(created).toEqual({
      id: expect.stringMatching(/^conv_[0-9a-f]{48}$/),
      object: 'conversation',
      created_at: expect.any(Number),
      metadata: { topic: 'demo' },
    });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(120);
    expect(await client.conversations.retrieve(created.id)).toEqual(created);

    const updated = await client.conversations.update(created.id, { metadata: { topic: 'changed' } });
    expect(updated).toEqual({ ...created, metadata: { topic: 'changed' } });

    const items = await client.conversations.items.list(created.id);
    expect(summary(items.data)).toEqual(['user:Hello!']);
    expect(items.data[0].id).toMatch(/^msg_/);

    expect(await client.conversations.delete(created.id)).toEqual({ id: created.id, object: 'conversation.deleted', deleted: true });
    await rejected(client.conversations.retrieve(created.id), OpenAI.NotFoundError);
    await rejected(client.conversations.items.list(created.id), OpenAI.NotFoundError);
  });

  it('creates a conversation without a body', async () => {
    const created = await client.conversations.create();
    expect(created).toMatchObject({ object: 'conversation', metadata: {} });
    const items = await client.conversations.items.list(created.id);
    expect(items.data).toEqual([]);
    expect(items.has_more).toBe(false);
  });

  it('adds items (ids kept or given), lists them in pages both ways, gets and deletes one', async () => {
    const { id } = await client.conversations.create();
    const texts = Array.from({ length: 5 }, (_, i) => `line ${i}`);
    const added = await client.conversations.items.create(id, {
      items: [
        ...texts.map((text) => ({ type: 'message' as const, role: 'user' as const, content: text })),
        { type: 'function_call_output', call_id: 'call_x', output: 'done' },
      ],
    });
    expect(added.data).toHaveLength(6);
    expect(added.data.slice(0, 5).every((item) => /^msg_/.test(item.id!))).toBe(true);
    expect(added.data[5]).toMatchObject({ type: 'function_call_output', call_id: 'call_x', output: 'done', id: expect.stringMatching(/^fco_/) });
    const kept = await client.conversations.items.create(id, {
      items: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'mine' }], id: 'msg_own1' } as never],
    });
    expect(kept.data.map((item) => item.id)).toEqual(['msg_own1']);

    // Pages of two, oldest first, following the cursor as the SDK does.
    const asc: string[] = [];
    let firstPage = true;
    for await (const page of (await client.conversations.items.list(id, { limit: 2, order: 'asc' })).iterPages()) {
      expect(page.data.length).toBeLessThanOrEqual(2);
      if (firstPage) expect(page.has_more).toBe(true);
      firstPage = false;
      asc.push(...summary(page.data));
    }
    expect(asc).toEqual([...texts.map((text) => `user:${text}`), 'function_call_output', 'assistant:mine']);

    // Newest first by default.
    const desc = await client.conversations.items.list(id, { limit: 3 });
    expect(summary(desc.data)).toEqual(['assistant:mine', 'function_call_output', 'user:line 4']);
    expect(desc.has_more).toBe(true);
    const next = await client.conversations.items.list(id, { limit: 3, after: desc.last_id });
    expect(summary(next.data)).toEqual(['user:line 3', 'user:line 2', 'user:line 1']);

    const one = await client.conversations.items.retrieve(added.data[2].id!, { conversation_id: id });
    expect(one).toEqual(added.data[2]);
    const afterDelete = await client.conversations.items.delete(added.data[2].id!, { conversation_id: id });
    expect(afterDelete).toMatchObject({ id, object: 'conversation' });
    await rejected(client.conversations.items.retrieve(added.data[2].id!, { conversation_id: id }), OpenAI.NotFoundError);
    await rejected(client.conversations.items.delete(added.data[2].id!, { conversation_id: id }), OpenAI.NotFoundError);
    const all = await client.conversations.items.list(id, { order: 'asc', limit: 100 });
    expect(all.data.map((item) => item.id)).not.toContain(added.data[2].id);
    expect(all.data).toHaveLength(6);
  });

  it('continues a conversation over two responses: turn 2 sees turn 1, and the conversation holds both turns', async () => {
    const { id } = await client.conversations.create({ items: [{ type: 'message', role: 'developer', content: 'Be brief.' }] });
    // Turn 1: the simulator calls the tool it is asked for.
    const turn1 = await client.responses.create({
      model: 'sim-chat',
      conversation: id,
      input: 'Use get_weather for Oslo please',
      tools: [responsesWeatherTool],
    });
    expect(turn1).toMatchObject({ status: 'completed', conversation: { id } });
    const call = turn1.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });

    // Turn 2 sends only the tool's result: the simulator names the tool, which only turn 1's call says.
    const mk = marker('sunny');
    const turn2 = await client.responses.create({
      model: 'sim-chat',
      conversation: { id },
      input: [{ type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: `Sunny ${mk}` }],
      tools: [responsesWeatherTool],
    });
    expect(turn2.status).toBe('completed');
    expect(turn2.output_text).toContain(`The get_weather tool returned: "Sunny ${mk}"`);

    const items = await client.conversations.items.list(id, { order: 'asc', limit: 100 });
    expect(summary(items.data)).toEqual([
      'developer:Be brief.',
      'user:Use get_weather for Oslo please',
      ...summary(turn1.output),
      'function_call_output',
      ...summary(turn2.output),
    ]);
    // The output items keep the ids the responses gave them.
    const ids = items.data.map((item) => item.id);
    for (const item of [...turn1.output, ...turn2.output]) expect(ids).toContain(item.id);
  });

  it('streams a turn into a conversation, and a plain text turn 2 carries turn 1 as context', async () => {
    const { id } = await client.conversations.create();
    const mk = marker('first');
    const stream = await client.responses.create({ model: 'sim-chat', conversation: id, input: `remember ${mk}`, stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.status).toBe('completed');
    const alone = await client.responses.create({ model: 'sim-chat', input: 'and now?', store: false });
    const turn2 = await client.responses.create({ model: 'sim-chat', conversation: id, input: 'and now?' });
    expect(turn2.output_text).toContain('You said: "and now?"');
    // Turn 1's question and answer are part of turn 2's prompt.
    expect(turn2.usage!.input_tokens).toBeGreaterThan(alone.usage!.input_tokens);
    const items = await client.conversations.items.list(id, { order: 'asc' });
    const turn1Text = (completed!.output[0] as { content: { text: string }[] }).content[0].text;
    expect(summary(items.data)).toEqual([`user:remember ${mk}`, `assistant:${turn1Text}`, 'user:and now?', `assistant:${turn2.output_text}`]);
  });

  it('appends a turn with store: false too, keeping the response itself nowhere', async () => {
    const { id } = await client.conversations.create();
    const turn = await client.responses.create({ model: 'sim-chat', conversation: id, input: 'not stored', store: false });
    expect(turn).toMatchObject({ store: false, conversation: { id } });
    await rejected(client.responses.retrieve(turn.id), OpenAI.NotFoundError);
    const items = await client.conversations.items.list(id, { order: 'asc' });
    expect(summary(items.data)).toEqual(['user:not stored', `assistant:${turn.output_text}`]);
  });

  it("shows a proxy key only its own conversations; the master key sees the account's", async () => {
    const proxy = openaiClient((await createProxyKey(account.masterKey, { allocated_ammount: 5 })).key);
    const byMaster = await client.conversations.create();
    const byProxy = await proxy.conversations.create({ metadata: { who: 'proxy' } });
    await rejected(proxy.conversations.retrieve(byMaster.id), OpenAI.NotFoundError);
    await rejected(proxy.responses.create({ model: 'sim-chat', conversation: byMaster.id, input: 'hi' }), OpenAI.NotFoundError);
    expect(await proxy.conversations.retrieve(byProxy.id)).toEqual(byProxy);
    expect(await client.conversations.retrieve(byProxy.id)).toEqual(byProxy);
  });

  it("is another account's 404, and unknown ids are 404", async () => {
    const { id } = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'private' }] });
    const [item] = (await client.conversations.items.list(id)).data;
    const other = openaiClient(createAccount('pro', '10').masterKey);
    const errors = [
      await rejected(other.conversations.retrieve(id), OpenAI.NotFoundError),
      await rejected(other.conversations.update(id, { metadata: { a: 'b' } }), OpenAI.NotFoundError),
      await rejected(other.conversations.items.list(id), OpenAI.NotFoundError),
      await rejected(other.conversations.items.retrieve(item.id!, { conversation_id: id }), OpenAI.NotFoundError),
      await rejected(other.conversations.items.create(id, { items: [{ type: 'message', role: 'user', content: 'x' }] }), OpenAI.NotFoundError),
      await rejected(other.conversations.items.delete(item.id!, { conversation_id: id }), OpenAI.NotFoundError),
      await rejected(other.conversations.delete(id), OpenAI.NotFoundError),
    ];
    for (const error of errors) expect(error.message).not.toContain('private');
    const viaResponses = await rejected(other.responses.create({ model: 'sim-chat', conversation: id, input: 'hi' }), OpenAI.NotFoundError);
    expect(viaResponses.param).toBe('conversation');
    await rejected(client.conversations.retrieve('conv_unknown'), OpenAI.NotFoundError);
    // Still there, untouched, for its own account.
    expect(summary((await client.conversations.items.list(id)).data)).toEqual(['user:private']);
  });

  it('answers bad input with a 400 naming the field', async () => {
    const { id } = await client.conversations.create();
    const cases: [() => Promise<unknown>, string][] = [
      [() => client.conversations.create({ metadata: { n: 3 as never } }), 'metadata.n'],
      [
        () => client.conversations.create({ items: Array.from({ length: 21 }, () => ({ type: 'message' as const, role: 'user' as const, content: 'x' })) }),
        'items',
      ],
      [() => client.conversations.items.create(id, { items: [] }), 'items'],
      [() => client.conversations.items.create(id, { items: [{ content: 'no type, no role' } as never] }), 'items[0].type'],
      [() => client.conversations.update(id, {} as never), 'metadata'],
      [() => client.conversations.items.list(id, { limit: 0 }), 'limit'],
      [() => client.conversations.items.list(id, { order: 'sideways' as never }), 'order'],
      [() => client.conversations.items.list(id, { after: 'msg_not_here' }), 'after'],
      [() => client.responses.create({ model: 'sim-chat', conversation: id, previous_response_id: 'resp_x', input: 'hi' }), 'conversation'],
    ];
    for (const [call, param] of cases) {
      const error = await rejected(call(), OpenAI.BadRequestError);
      expect({ param: error.param, type: error.type }).toEqual({ param, type: 'invalid_request_error' });
    }
  });

  it('needs a key, like every route', async () => {
    const response = await api('POST', '/v1/conversations', { body: {} });
    expect(response.status).toBe(401);
  });
});
