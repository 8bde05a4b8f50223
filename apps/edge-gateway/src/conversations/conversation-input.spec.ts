import { DomainError } from '@gateway/errors';
import { bodyObject, conversationItems, conversationMetadata } from './conversation-input';

function rejection(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

describe('conversation request bodies', () => {
  it('takes an absent body as empty, and refuses one that is not an object', () => {
    expect(bodyObject(undefined)).toEqual({});
    expect(rejection(() => bodyObject([1]))).toMatchObject({ status: 400 });
  });

  it('accepts metadata of up to 16 string pairs', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect(conversationMetadata(sixteen)).toEqual(sixteen);
    expect(conversationMetadata(undefined)).toEqual({});
  });

  it.each([
    ['a string', 'metadata'],
    [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'metadata'],
    [{ ['k'.repeat(65)]: 'v' }, 'metadata'],
    [{ topic: 3 }, 'metadata.topic'],
    [{ topic: 'x'.repeat(513) }, 'metadata.topic'],
  ])('refuses metadata %j at %s', (metadata, param) => {
    expect(rejection(() => conversationMetadata(metadata))).toMatchObject({ status: 400, param });
  });

  it('accepts up to 20 items, and none only where they are optional', () => {
    expect(conversationItems(undefined, false)).toEqual([]);
    expect(
      conversationItems(
        Array.from({ length: 20 }, () => ({ role: 'user', content: 'x' })),
        true,
      ),
    ).toHaveLength(20);
  });

  it.each([
    ['absent', undefined, 'items'],
    ['empty', [], 'items'],
    ['a string', 'hi', 'items'],
    ['21 items', Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })), 'items'],
    ['a string among them', [{ role: 'user', content: 'x' }, 'text'], 'items[1]'],
  ])('refuses items (%s) at %s', (_label, items, param) => {
    expect(rejection(() => conversationItems(items, true))).toMatchObject({ status: 400, param });
  });
});
