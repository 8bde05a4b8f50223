/**
 * Encrypted reasoning for stateless Responses clients (`store: false`, `include:
 * ["reasoning.encrypted_content"]`, as the AI SDK and opencode send): turn 1's reasoning items carry
 * `encrypted_content`, and turn 2, which sends back only that, runs with turn 1's reasoning — on
 * Anthropic as the signed thinking block, as the fake upstream receives it.
 */
import OpenAI from 'openai';
import type { Response, ResponseInputItem, ResponseReasoningItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { createAccount, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_SIGNATURE } from '../support/fake-upstreams';

const INCLUDE = ['reasoning.encrypted_content' as const];
/** Above the 1,024-token thinking budget Anthropic upstreams need. */
const MAX_OUTPUT_TOKENS = 4096;

/** One stateless turn, whole or streamed; the streamed one also returns the reasoning items of its `response.output_item.done` events. */
async function turn(
  client: OpenAI,
  model: string,
  input: ResponseInputItem[],
  stream: boolean,
): Promise<{ response: Response; doneItems: ResponseReasoningItem[] }> {
  const body = { model, input, store: false, include: INCLUDE, reasoning: { effort: 'low' as const }, max_output_tokens: MAX_OUTPUT_TOKENS };
  if (!stream) return { response: await client.responses.create(body), doneItems: [] };
  const events: ResponseStreamEvent[] = [];
  for await (const event of await client.responses.create({ ...body, stream: true })) events.push(event);
  const completed = events.find((event) => event.type === 'response.completed');
  if (completed?.type !== 'response.completed') throw new Error(`no response.completed among ${events.map((event) => event.type).join(', ')}`);
  const doneItems = events.flatMap((event) => (event.type === 'response.output_item.done' && event.item.type === 'reasoning' ? [event.item] : []));
  return { response: completed.response, doneItems };
}

/** The reasoning item of a turn-1 reply, which must carry `encrypted_content` and no readable reasoning. */
function reasoningItemOf(response: Response): ResponseReasoningItem {
  const items = response.output.filter((item): item is ResponseReasoningItem => item.type === 'reasoning');
  expect(items).toHaveLength(1);
  expect(items[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [], encrypted_content: expect.stringMatching(/^gwr1\./) });
  return items[0];
}

/** Turn 2's input as a stateless client builds it: turn 1's prompt and output (the reasoning item reduced to what the AI SDK sends back), then a new question. */
function secondTurnInput(firstPrompt: string, first: Response, reasoning: Partial<ResponseReasoningItem>, question: string): ResponseInputItem[] {
  const message = first.output.find((item) => item.type === 'message');
  return [
    { role: 'user', content: firstPrompt },
    { type: 'reasoning', id: first.output[0].id, summary: [], ...reasoning } as ResponseInputItem,
    message as ResponseInputItem,
    { role: 'user', content: question },
  ];
}

/** The 400 a request gets, as the `openai` SDK reports it. */
async function refusal(request: Promise<unknown>): Promise<{ status: number; param: unknown; message: string }> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return { status: error.status as number, param: error.param, message: error.message };
}

describe('encrypted reasoning (stateless responses)', () => {
  let account: TestAccount;
  let client: OpenAI;

  beforeAll(() => {
    account = createAccount('pro', '100');
    client = openaiClient(account.masterKey);
  });

  describe.each([
    ['whole', false],
    ['streamed', true],
  ])('%s', (_label, stream) => {
    it('carries the Anthropic thinking block, signature included, into the next turn of a fake Anthropic thinker', async () => {
      const first = `Plan a trip to ${marker('t1')}`;
      const one = await turn(client, 'fake-anthropic-thinker', [{ role: 'user', content: first }], stream);
      const item = reasoningItemOf(one.response);
      // The streamed item is done with its content, the same the terminal response holds.
      if (stream) expect(one.doneItems).toEqual([item]);
      // Opaque: neither the reasoning nor the signature can be read from it.
      expect(item.encrypted_content).not.toContain(FAKE_SIGNATURE);
      expect(Buffer.from(item.encrypted_content!.slice(5), 'base64url').toString('latin1')).not.toContain('step by step');

      const second = marker('t2');
      const two = await turn(
        client,
        'fake-anthropic-thinker',
        secondTurnInput(first, one.response, { encrypted_content: item.encrypted_content }, second),
        stream,
      );
      expect(two.response.status).toBe('completed');
      const [received] = await fakeRequestsMentioning('anthropic', second);
      expect((received.body as any).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: first }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: `The user asked "${first}". I will think step by step and then answer briefly.`, signature: FAKE_SIGNATURE },
            { type: 'text', text: expect.any(String) },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: second }] },
      ]);
    });

    it("carries the simulator's reasoning into the next turn: it is part of what the model reads", async () => {
      const first = `Why is the sky blue? ${marker('s1')}`;
      const one = await turn(client, 'sim-reasoner', [{ role: 'user', content: first }], stream);
      const item = reasoningItemOf(one.response);
      const question = 'And at sunset?';
      const restored = await turn(
        client,
        'sim-reasoner',
        secondTurnInput(first, one.response, { encrypted_content: item.encrypted_content }, question),
        stream,
      );
      const without = await turn(client, 'sim-reasoner', secondTurnInput(first, one.response, {}, question), stream);
      // The simulator counts every input token it reads: the restored reasoning adds about as many as it had.
      const added = restored.response.usage!.input_tokens - without.response.usage!.input_tokens;
      expect(added).toBeGreaterThan(0.5 * one.response.usage!.output_tokens_details.reasoning_tokens);
      reasoningItemOf(restored.response);
    });
  });

  it('refuses altered content with a 400 naming the field', async () => {
    const first = `Plan a picnic ${marker('x')}`;
    const one = await turn(client, 'sim-reasoner', [{ role: 'user', content: first }], false);
    const sealed = reasoningItemOf(one.response).encrypted_content!;
    const altered = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
    const input = secondTurnInput(first, one.response, { encrypted_content: altered }, 'Where?');
    expect(await refusal(client.responses.create({ model: 'sim-reasoner', input, store: false }))).toEqual({
      status: 400,
      param: 'input.1.encrypted_content',
      message: expect.stringContaining('input.1.encrypted_content: cannot be opened'),
    });
    const truncated = secondTurnInput(first, one.response, { encrypted_content: sealed.slice(0, 12) }, 'Where?');
    expect(await refusal(client.responses.create({ model: 'sim-reasoner', input: truncated, store: false }))).toMatchObject({
      status: 400,
      param: 'input.1.encrypted_content',
    });
  });

  it("refuses another account's content with a 400 naming the field", async () => {
    const first = `Plan a hike ${marker('o')}`;
    const one = await turn(client, 'fake-anthropic-thinker', [{ role: 'user', content: first }], false);
    const input = secondTurnInput(first, one.response, { encrypted_content: reasoningItemOf(one.response).encrypted_content }, 'When?');
    const other = openaiClient(createAccount('pro', '100').masterKey);
    expect(
      await refusal(other.responses.create({ model: 'fake-anthropic-thinker', input, store: false, include: INCLUDE, max_output_tokens: MAX_OUTPUT_TOKENS })),
    ).toEqual({
      status: 400,
      param: 'input.1.encrypted_content',
      message: expect.stringContaining('sealed for another account'),
    });
  });

  it('returns no encrypted_content unless include asks for it', async () => {
    const response = await client.responses.create({ model: 'sim-reasoner', input: 'Why is the sky blue?', store: false, reasoning: { effort: 'low' } });
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    expect(reasoning).toEqual({ id: expect.any(String), type: 'reasoning', summary: [] });
  });
});
