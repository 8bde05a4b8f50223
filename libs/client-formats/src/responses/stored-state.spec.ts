import { DomainError } from '@gateway/errors';
import { clientFormat } from '../registry';
import { context, eventsFor, response } from '../testing/spec-fixtures';
import { resolveStoredReferences, storedReferences, storedResponseId, type StoredConversation } from './stored-state';

const responses = clientFormat('responses');
const parse = (body: Record<string, unknown>) => responses.parse({ model: 'm', ...body }, { reasoningExcludeSuffix: false });

/** Turn 1 as stored: a user message in, a reasoning item and a function call out. */
const turn1: StoredConversation = {
  inputItems: [{ id: 'msg_t1_in0', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather in Paris?' }] }],
  response: {
    id: 'resp_t1',
    output: [
      { id: 'rs_t1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'need the tool' }] },
      { id: 'fc_t1_0', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
    ],
  },
};

function rejection(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

describe('stored responses: references', () => {
  it('names the previous response and each referenced item once, in order', () => {
    const body = {
      previous_response_id: 'resp_t1',
      input: [
        { type: 'item_reference', id: 'fc_t1_0' },
        { role: 'user', content: 'x' },
        { type: 'item_reference', id: 'rs_t1' },
        { type: 'item_reference', id: 'fc_t1_0' },
      ],
    };
    expect(storedReferences(body)).toEqual({ previousResponseId: 'resp_t1', itemIds: ['fc_t1_0', 'rs_t1'] });
  });

  it.each([
    [{ previous_response_id: '' }, 'previous_response_id'],
    [{ previous_response_id: 3 }, 'previous_response_id'],
    [{ input: [{ type: 'item_reference' }] }, 'input.0.id'],
    [{ input: [{ type: 'item_reference', id: 5 }] }, 'input.0.id'],
  ])('refuses %j at %s', (body, param) => {
    expect(rejection(() => storedReferences({ model: 'm', ...body }))).toMatchObject({ status: 400, param });
  });

  it('gives the response the digits of the request id', () => {
    expect(storedResponseId('req_0123abcd')).toBe('resp_0123abcd');
  });
});

describe('stored responses: resolving', () => {
  it('puts the previous input and output items before the new input, which gets ids', () => {
    const body = { model: 'm', previous_response_id: 'resp_t1', input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }] };
    const resolved = resolveStoredReferences(body, turn1, {}, 'req_t2');
    expect(resolved.inputItems).toEqual([
      ...turn1.inputItems,
      ...(turn1.response.output as object[]),
      { id: 'fco_t2_in0', type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ]);
    expect(resolved.body.input).toEqual(resolved.inputItems);
    // The model sees the whole conversation: the question, the call (with its reasoning), the result.
    const { request } = parse(resolved.body);
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{ type: 'thinking', text: 'need the tool' }],
        toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ]);
  });

  it('does not carry the previous instructions over (as OpenAI)', () => {
    const resolved = resolveStoredReferences(
      { model: 'm', input: 'next' },
      { ...turn1, response: { ...turn1.response, instructions: 'be terse' } },
      {},
      'req_t2',
    );
    expect(parse(resolved.body).request.system).toBeUndefined();
  });

  it('replaces item references by the stored items, and stores a string input as a user message', () => {
    const input = [
      { role: 'user', content: 'weather in Paris?' },
      { type: 'item_reference', id: 'rs_t1' },
      { type: 'item_reference', id: 'fc_t1_0' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ];
    const items = Object.fromEntries((turn1.response.output as { id: string }[]).map((item) => [item.id, item]));
    const resolved = resolveStoredReferences({ model: 'm', input }, undefined, items, 'req_x');
    expect(resolved.inputItems.map((item) => item.id)).toEqual(['msg_x_in0', 'rs_t1', 'fc_t1_0', 'fco_x_in3']);
    expect(resolved.inputItems[0]).toEqual({ id: 'msg_x_in0', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather in Paris?' }] });
    expect(parse(resolved.body).request.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'call_1' }] });
    expect(resolveStoredReferences({ model: 'm', input: 'hi' }, undefined, {}, 'req_y').inputItems).toEqual([
      { id: 'msg_y_in0', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    ]);
  });

  it('is a 404 naming the input item when a referenced item is not found', () => {
    const error = rejection(() => resolveStoredReferences({ model: 'm', input: [{ type: 'item_reference', id: 'msg_gone' }] }, undefined, {}, 'req_x'));
    expect(error).toMatchObject({ status: 404, param: 'input.0.id', message: "Item with id 'msg_gone' not found." });
  });

  it('keeps the first copy of an item the conversation already holds', () => {
    const body = {
      model: 'm',
      previous_response_id: 'resp_t1',
      input: [{ type: 'item_reference', id: 'fc_t1_0' }, { ...(turn1.response.output as object[])[0] }, 'not an item'],
    };
    expect(rejection(() => resolveStoredReferences(body, turn1, { fc_t1_0: {} }, 'req_x'))).toMatchObject({ param: 'input.2' });
    const ok = resolveStoredReferences(
      { ...body, input: body.input.slice(0, 2) },
      turn1,
      { fc_t1_0: (turn1.response.output as object[])[1] as never },
      'req_x',
    );
    expect(ok.inputItems.map((item) => item.id)).toEqual(['msg_t1_in0', 'rs_t1', 'fc_t1_0']);
  });

  it('leaves an input the parser refuses for the parser to name', () => {
    expect(resolveStoredReferences({ model: 'm', input: 7 }, turn1, {}, 'req_x').body.input).toBe(7);
  });
});

describe('stored responses: rendering', () => {
  it('echoes store and previous_response_id, and `store` defaults to true', () => {
    const parsed = parse({ input: 'hi', previous_response_id: 'resp_t1' });
    expect(parsed).toMatchObject({ store: true, previousResponseId: 'resp_t1' });
    expect(parse({ input: 'hi', store: false }).store).toBe(false);
    const ctx = context({ store: true, previousResponseId: 'resp_t1' });
    expect(responses.render(response(), ctx)).toMatchObject({ store: true, previous_response_id: 'resp_t1' });
    expect(responses.render(response(), context())).toMatchObject({ store: false, previous_response_id: null });
  });

  it('hands over the final response of a stream, the one its terminal event carries, with the same item ids', () => {
    const encoder = responses.createStreamEncoder(context({ store: true }));
    const events = eventsFor(response({ id: 'resp_s', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }], stopReason: 'tool_calls' }));
    events.slice(0, -1).forEach((event) => encoder.encode(event));
    expect(encoder.finalResponse?.()).toBeUndefined();
    const last = encoder.encode(events[events.length - 1]);
    const terminal = JSON.parse(last[last.length - 1].split('data: ')[1]);
    expect(terminal.type).toBe('response.completed');
    expect(encoder.finalResponse?.()).toEqual(terminal.response);
    expect((terminal.response.output as { id: string }[]).map((item) => item.id)).toEqual(['msg_s', 'fc_s_0']);
  });

  it('has no final response when the stream ended in an error', () => {
    const encoder = responses.createStreamEncoder(context({ store: true }));
    eventsFor(response())
      .slice(0, 3)
      .forEach((event) => encoder.encode(event));
    encoder.error({ status: 502, message: 'boom' });
    expect(encoder.finalResponse?.()).toBeUndefined();
  });
});

describe('stored responses: conversations', () => {
  it('names the conversation, given as an id or as {id}', () => {
    expect(storedReferences({ model: 'm', conversation: 'conv_1', input: 'hi' }).conversationId).toBe('conv_1');
    expect(storedReferences({ model: 'm', conversation: { id: 'conv_2' }, input: 'hi' }).conversationId).toBe('conv_2');
    expect(storedReferences({ model: 'm', conversation: null, input: 'hi' }).conversationId).toBeUndefined();
  });

  it.each([
    [{ conversation: '' }, 'conversation'],
    [{ conversation: 7 }, 'conversation'],
    [{ conversation: {} }, 'conversation.id'],
    [{ conversation: 'conv_1', previous_response_id: 'resp_1' }, 'conversation'],
  ])('refuses %j at %s', (body, param) => {
    expect(rejection(() => storedReferences({ model: 'm', input: 'hi', ...body }))).toMatchObject({ status: 400, param });
  });

  it("puts the conversation's items first, tells the request's own items apart, and leaves `conversation` out of the body", () => {
    const conversation: StoredConversation = { response: {}, inputItems: [...turn1.inputItems, ...(turn1.response.output as Record<string, unknown>[])] };
    const resolved = resolveStoredReferences({ model: 'm', conversation: 'conv_1', input: 'and tomorrow?' }, conversation, {}, 'req_t2');
    expect(resolved.inputItems.map((item) => item.id)).toEqual(['msg_t1_in0', 'rs_t1', 'fc_t1_0', 'msg_t2_in0']);
    expect(resolved.ownItems).toEqual([{ id: 'msg_t2_in0', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and tomorrow?' }] }]);
    expect(resolved.body).not.toHaveProperty('conversation');
    expect(() => parse(resolved.body)).not.toThrow();
  });
});
