import * as fc from 'fast-check';
import { encode } from 'gpt-tokenizer';
import { countTextsTokens, countTextTokens, countTextTokensUpTo, EXACT_COUNT_MAX_CHARS } from './token-estimate';

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

  describe('countTextTokensUpTo', () => {
    it('is exact for long text of words, mixed scripts, JSON and emoji (property)', () => {
      const word = fc.oneof(
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.constantFrom('the', 'Über', '\u4e00\u4e8c\u4e09', '😀', '{"a":1}', "don't", '\n\n', '  ', '12345', '!!'),
      );
      fc.assert(
        fc.property(fc.array(word, { minLength: 200, maxLength: 2000 }), (words) => {
          const text = words.join(' ');
          expect(countTextTokensUpTo(text, 1_000_000)).toBe(exact(text));
        }),
        { seed: 7, numRuns: 40 },
      );
    });

    it('counts a 10,000-character English text exactly, where the bounded estimate counts bytes', () => {
      const text = 'Embeddings map text to vectors, and similar texts land close together. '.repeat(150).slice(0, 10_008);
      expect(countTextTokens(text)).toBe(10_008);
      expect(countTextTokensUpTo(text, 8192)).toBe(exact(text));
      expect(exact(text)).toBeLessThan(2500);
    });

    it('answers undefined past the limit, and stops early on a huge text', () => {
      expect(countTextTokensUpTo('hello world', 2)).toBe(2);
      expect(countTextTokensUpTo('hello world again', 2)).toBeUndefined();
      for (const huge of ['x'.repeat(2_000_000), '\u4e00'.repeat(2_000_000), 'word '.repeat(400_000), '😀'.repeat(1_000_000)]) {
        const started = process.hrtime.bigint();
        expect(countTextTokensUpTo(huge, 8192)).toBeUndefined();
        expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
      }
    });
  });
});
