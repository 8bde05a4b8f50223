/**
 * Stateful Responses through the `openai` SDK, as the AI SDK's and Codex's Responses clients use
 * them: replies are stored by default, `previous_response_id` continues a conversation,
 * `item_reference` names earlier output by id, and stored responses can be read back, listed and
 * deleted, by the key's account (and, for proxy keys, the key) only.
 */
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { Client } from 'pg';
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient, responsesWeatherTool } from '../support/clients';
import { suiteInfo } from '../support/suite-info';

const RESULT = 'Sunny, 21 degrees';

async function notFound(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.NotFoundError>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  return error as InstanceType<typeof OpenAI.NotFoundError>;
}

/** What a user of the SDK would see of each input item: its type and, for messages, role and text. */
function summary(items: { type: string; role?: string; content?: unknown }[]): string[] {
  return items.map((item) => {
    if (item.type !== 'message') return item.type;
    const parts = Array.isArray(item.content) ? (item.content as { text?: string }[]) : [];
    return `${item.role}:${parts.map((part) => part.text ?? '').join('')}`;
  });
}

describe('stored responses', () => {
  let account: TestAccount;
  let client: OpenAI;

  beforeAll(() => {
    account = createAccount('pro', '100');
    client = openaiClient(account.masterKey);
  });

  it('stores a response by default, under the id that names its request, and retrieves it as returned', async () => {
    const { data: created, response } = await client.responses.create({ model: 'sim-chat', input: `remember ${marker('store')}` }).withResponse();
    expect(created).toMatchObject({ store: true }); // `store` is on the wire, not in the SDK's Response type
    expect(created.id).toBe(`resp_${response.headers.get('x-request-id')!.replace(/^req_/, '')}`);
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toEqual(JSON.parse(JSON.stringify(created)));
  });

  it('stores nothing with store: false', async () => {
    const created = await client.responses.create({ model: 'sim-chat', input: 'not kept', store: false });
    expect(created).toMatchObject({ store: false });
    await notFound(client.responses.retrieve(created.id));
    const error = await notFound(client.responses.create({ model: 'sim-chat', input: 'next', previous_response_id: created.id }));
    expect(error.param).toBe('previous_response_id');
  });

  it.each(['sim-chat', 'fake-openai'])('continues a conversation over three turns with previous_response_id (%s)', async (model) => {
    const mk = marker('chain');
    const turn1 = await client.responses.create({ model, input: `first ${mk}` });
    // The second turn streams: the stored response must be there when the stream ends.
    const stream = await client.responses.create({ model, input: `second ${mk}`, previous_response_id: turn1.id, stream: true });
    let turn2Id = '';
    for await (const event of stream) if (event.type === 'response.completed') turn2Id = event.response.id;
    expect(turn2Id).toMatch(/^resp_/);
    const turn3 = await client.responses.create({ model, input: `third ${mk}`, previous_response_id: turn2Id });
    expect(turn3.previous_response_id).toBe(turn2Id);
    expect(turn3.status).toBe('completed');

    const items = await client.responses.inputItems.list(turn3.id, { order: 'asc' });
    expect(summary(items.data)).toEqual([
      `user:first ${mk}`,
      `assistant:${turn1.output_text}`,
      `user:second ${mk}`,
      expect.stringMatching(/^assistant:/),
      `user:third ${mk}`,
    ]);
    expect(items.data.every((item) => typeof item.id === 'string' && item.id.length > 0)).toBe(true);
    expect(items.data[1].id).toBe(turn1.output[0].id);

    if (model === 'fake-openai') {
      const sent = (await fakeRequestsMentioning('openai', `third ${mk}`)).map((request) => request.body);
      expect(sent).toHaveLength(1);
      expect(sent[0].messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(sent[0].messages[0].content).toContain(`first ${mk}`);
    }
  });

  it("runs a function-call tool loop whose second step names the first step's output by item_reference", async () => {
    const mk = marker('itemref');
    const prompt = `What is the weather in Paris? Use the get_weather tool. (${mk})`;
    const first = await client.responses.create({ model: 'fake-openai', input: prompt, tools: [responsesWeatherTool] });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ id: expect.stringMatching(/^fc_/), name: 'get_weather' });
    if (call?.type !== 'function_call') throw new Error('no function call');

    // As the AI SDK sends step 2 with store on: the user's message, its earlier output by id, the tool result.
    const input: ResponseInputItem[] = [
      { role: 'user', content: prompt },
      ...first.output.map((item) => ({ type: 'item_reference' as const, id: item.id! })),
      { type: 'function_call_output', call_id: call.call_id, output: RESULT },
    ];
    const second = await client.responses.create({ model: 'fake-openai', input, tools: [responsesWeatherTool] });
    expect(second.output_text).toContain(RESULT);
    const sent = (await fakeRequestsMentioning('openai', mk)).map((request) => request.body);
    expect(sent[1].messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: call.call_id, function: { name: 'get_weather', arguments: call.arguments } }],
    });
    expect(sent[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: call.call_id, content: RESULT });

    const missing = await notFound(client.responses.create({ model: 'fake-openai', input: [{ type: 'item_reference', id: 'fc_nothing_0' }] }));
    expect(missing.param).toBe('input.0.id');
  });

  it('lists input items a page at a time, newest first by default', async () => {
    const turn1 = await client.responses.create({ model: 'sim-chat', input: 'one' });
    const turn2 = await client.responses.create({ model: 'sim-chat', input: 'two', previous_response_id: turn1.id });
    const all = await client.responses.inputItems.list(turn2.id);
    expect(summary(all.data)).toEqual(['user:two', `assistant:${turn1.output_text}`, 'user:one']);
    const page1 = await client.responses.inputItems.list(turn2.id, { order: 'asc', limit: 2 });
    const raw = await api('GET', `/v1/responses/${turn2.id}/input_items?order=asc&limit=2`, { key: account.masterKey });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ object: 'list', data: page1.data, first_id: page1.data[0].id, last_id: page1.data[1].id, has_more: true });
    const page2 = await client.responses.inputItems.list(turn2.id, { order: 'asc', limit: 2, after: page1.data[1].id });
    expect(summary(page2.data)).toEqual(['user:two']);
    expect(page2.has_more).toBe(false);
    // The SDK's auto-pagination follows `after` to the end.
    const everything: string[] = [];
    for await (const item of client.responses.inputItems.list(turn2.id, { order: 'asc', limit: 1 })) everything.push(item.id!);
    expect(everything).toEqual([...page1.data, ...page2.data].map((item) => item.id));
  });

  it('deletes a stored response: retrieve, previous_response_id and a second delete then get 404', async () => {
    const created = await client.responses.create({ model: 'sim-chat', input: 'delete me' });
    const deleted = await client.responses.delete(created.id).asResponse();
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: created.id, object: 'response', deleted: true });
    await notFound(client.responses.retrieve(created.id));
    await notFound(client.responses.create({ model: 'sim-chat', input: 'x', previous_response_id: created.id }));
    await notFound(client.responses.delete(created.id));
  });

  it("is invisible to another account's key, in OpenAI's error shape", async () => {
    const created = await client.responses.create({ model: 'sim-chat', input: 'mine' });
    const other = openaiClient(createAccount('pro', '10').masterKey);
    const error = await notFound(other.responses.retrieve(created.id));
    expect(error.error).toMatchObject({ message: expect.stringContaining(created.id), type: expect.any(String) });
    await notFound(other.responses.inputItems.list(created.id));
    await notFound(other.responses.delete(created.id));
    const chained = await notFound(other.responses.create({ model: 'sim-chat', input: 'x', previous_response_id: created.id }));
    expect(chained.error).toMatchObject({ message: `Previous response with id '${created.id}' not found.`, param: 'previous_response_id' });
    const referenced = await notFound(other.responses.create({ model: 'sim-chat', input: [{ type: 'item_reference', id: created.output[0].id! }] }));
    expect(referenced.param).toBe('input.0.id');
    // Still there for its owner.
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
  });

  it("gives a proxy key its own stored responses only; the account's master key sees them all", async () => {
    const proxy = openaiClient((await createProxyKey(account.masterKey, { allocated_ammount: 5 })).key);
    const byMaster = await client.responses.create({ model: 'sim-chat', input: 'master' });
    const byProxy = await proxy.responses.create({ model: 'sim-chat', input: 'proxy' });
    await notFound(proxy.responses.retrieve(byMaster.id));
    expect((await proxy.responses.retrieve(byProxy.id)).id).toBe(byProxy.id);
    expect((await client.responses.retrieve(byProxy.id)).id).toBe(byProxy.id);
    const next = await proxy.responses.create({ model: 'sim-chat', input: 'again', previous_response_id: byProxy.id });
    expect(next.previous_response_id).toBe(byProxy.id);
  });

  it('forgets a response once its retention has passed', async () => {
    const created = await client.responses.create({ model: 'sim-chat', input: 'short-lived' });
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
    const db = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
    await db.connect();
    try {
      await db.query(`UPDATE stored_responses SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.id]);
    } finally {
      await db.end();
    }
    await notFound(client.responses.retrieve(created.id));
    await notFound(client.responses.create({ model: 'sim-chat', input: 'x', previous_response_id: created.id }));
  });
});
