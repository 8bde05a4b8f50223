import * as fc from 'fast-check';
import { encode } from 'gpt-tokenizer';
import { countTextsTokens, countTextTokens, EXACT_COUNT_MAX_CHARS } from './token-estimate';

const exact = (text: string) => encode(text, { disallowedSpecial: new Set<string>() }).length;

describe('bounded token counting', () => {
  it('is exact for ordinary text, JSON and code', () => {
    for (const text of [
      'The quick brown fox jumps over the lazy dog. '.repeat(50),
      '{"city":"Paris","days":3,"unit":"celsius"}',
      'const x = f(a, b) => a + b; // sum',
    ]) {
      expect(countTextTokens(text)).toBe(exact(text));
    }
  });

  it('never counts fewer tokens than the encoder (property: long runs, CJK, whitespace mixed in)', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom('x', '.', ' ', '\u4e00', '\n', '7').chain((c) => fc.integer({ min: 1, max: 200 }).map((n) => c.repeat(n))),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join('');
        expect(countTextTokens(text)).toBeGreaterThanOrEqual(exact(text));
      }),
      { seed: 12, numRuns: 300 },
    );
  });

  it('counts the UTF-8 bytes of a text past the exact budget, without encoding it', () => {
    const text = '\u4e00'.repeat(EXACT_COUNT_MAX_CHARS + 1);
    expect(countTextTokens(text)).toBe(Buffer.byteLength(text));
    expect(countTextTokens('x'.repeat(1_000_000))).toBe(1_000_000);
  });

  it('shares the exact budget across the texts of one request', () => {
    const text = 'hello world '.repeat(500); // 6,000 characters
    const [first, second] = countTextsTokens([text, text]);
    expect(first).toBe(exact(text));
    expect(second).toBe(Buffer.byteLength(text));
  });
});
