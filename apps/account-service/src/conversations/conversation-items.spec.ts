import { DomainError } from '@gateway/errors';
import { newConversationId, storedItems } from './conversation-items';

function rejection(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

describe('conversation items as stored', () => {
  it('keeps an item with an id as given', () => {
    const call = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' };
    expect(storedItems([call], 'items')).toEqual([call]);
  });

  it('gives an item without an id one with the prefix of its type', () => {
    const [message, output, other] = storedItems(
      [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
        { type: 'web_search_call' },
      ],
      'items',
    );
    expect(message.id).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(output.id).toMatch(/^fco_[0-9a-f]{48}$/);
    expect(other.id).toMatch(/^item_[0-9a-f]{48}$/);
  });

  it('stores a message given as role and string content as OpenAI lists it', () => {
    const [user, assistant] = storedItems(
      [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi there', id: 'msg_a' },
      ],
      'items',
    );
    expect(user).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] });
    expect(assistant).toEqual({ id: 'msg_a', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi there' }] });
  });

  it.each([
    [['text'], 'items[0]'],
    [[{ content: 'no role' }], 'items[0].type'],
    [[{ type: 3 }], 'items[0].type'],
    [[{ type: 'message', content: 'x' }], 'items[0].role'],
    [[{ role: 'user' }], 'items[0].content'],
    [[{ role: 'user', content: 'x', id: '' }], 'items[0].id'],
  ])('refuses %j at %s', (items, param) => {
    expect(rejection(() => storedItems(items, 'items'))).toMatchObject({ status: 400, param });
  });

  it('names conversations conv_ and 48 hex digits', () => {
    expect(newConversationId()).toMatch(/^conv_[0-9a-f]{48}$/);
    expect(newConversationId()).not.toBe(newConversationId());
  });
});
