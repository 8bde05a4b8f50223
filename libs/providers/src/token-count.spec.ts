import { encode } from 'gpt-tokenizer';
import { canonicalRequest } from './testing/canonical-fixtures';
import { completeUsage, countOutputTokens, countPromptTokens, countTokens, splitTokenPieces } from './token-count';

describe('token counting', () => {
  it('counts like gpt-tokenizer, treating special-token text as plain text', () => {
    expect(countTokens('Hello, world!')).toBe(encode('Hello, world!').length);
    expect(countTokens('')).toBe(0);
    expect(countTokens('before <|endoftext|> after')).toBeGreaterThan(3);
  });

  it('splits text into pieces that decode cleanly and add up to the token count', () => {
    const text = 'Plain words, 日本語 and emoji 🎉🎉 too.';
    const pieces = splitTokenPieces(text);
    expect(pieces.map((piece) => piece.text).join('')).toBe(text);
    expect(pieces.reduce((sum, piece) => sum + piece.tokens, 0)).toBe(encode(text).length);
    expect(pieces.some((piece) => piece.text.includes('\uFFFD'))).toBe(false);
  });

  it('counts prompts and outputs, and fills in only the usage an upstream left out', () => {
    const request = canonicalRequest({
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image', url: 'https://example.com/a.png' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Calling.' }], toolCalls: [{ id: 'c', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', toolCallId: 'c', content: 'done' },
      ],
    });
    const expectedInput = ['Be brief.', 'Hi', 'Calling.', 'f', '{"a":1}', 'done'].reduce((sum, text) => sum + encode(text).length, 0);
    expect(countPromptTokens(request)).toBe(expectedInput);
    const output = { text: 'Answer.', reasoning: 'Thought.', toolCalls: [] };
    expect(countOutputTokens(output)).toBe(encode('Answer.').length + encode('Thought.').length);
    expect(completeUsage(undefined, request, output)).toEqual({
      inputTokens: expectedInput,
      outputTokens: countOutputTokens(output),
      reasoningTokens: encode('Thought.').length,
    });
    expect(completeUsage({ inputTokens: 50, outputTokens: 0, cachedInputTokens: 10 }, request, output)).toEqual({
      inputTokens: 50,
      outputTokens: countOutputTokens(output),
      cachedInputTokens: 10,
    });
    expect(completeUsage({ inputTokens: 50, outputTokens: 7 }, request, output)).toEqual({ inputTokens: 50, outputTokens: 7 });
  });
});
