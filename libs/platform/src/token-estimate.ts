import { countTokens } from 'gpt-tokenizer';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The longest text that is BPE-encoded. gpt-tokenizer's work grows with the square of a
 * pre-token's length (a run of one character, CJK without spaces), and its linear rate is slow
 * (about 4 µs a character on random text), so past this a text counts its UTF-8 bytes instead.
 */
export const EXACT_COUNT_MAX_CHARS = 8192;

/**
 * Runs of this many characters or more of one class (letters, punctuation or whitespace) are not
 * BPE-encoded within an exactly counted text: they count their bytes. The encoder's pre-tokenizer
 * keeps such a run as one piece, which is where its work turns quadratic; digits it cuts into
 * threes, and a mixed run (JSON, base64, code) it cuts at every change of class, so those stay exact.
 */
export const LONG_RUN_CHARS = 32;

const LONG_RUN = new RegExp(`[\\p{L}\\p{M}]{${LONG_RUN_CHARS},}|[^\\s\\p{L}\\p{M}\\p{N}]{${LONG_RUN_CHARS},}|\\s{${LONG_RUN_CHARS},}`, 'gu');

/**
 * Tokens of a text with gpt-tokenizer (o200k_base): exact for OpenAI models, an estimate for
 * others, in time linear in the text's length. Every token is at least one UTF-8 byte, so the byte
 * length is an upper bound; it stands in for the parts that would cost super-linear or unbounded
 * work: a whole text longer than `EXACT_COUNT_MAX_CHARS`, and each run of `LONG_RUN_CHARS` or more
 * characters of one class. The bound overstates English text about fourfold.
 */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > EXACT_COUNT_MAX_CHARS) return Buffer.byteLength(text, 'utf8');
  return countWithinBudget(text);
}

/**
 * Tokens of several texts (a prompt's messages, an embedding's inputs), each as `countTextTokens`
 * counts it, with `EXACT_COUNT_MAX_CHARS` shared by all of them: once the texts encoded so far
 * reach it, the rest count their bytes, so many short texts cost no more than one long one.
 */
export function countTextsTokens(texts: readonly string[]): number[] {
  let budget = EXACT_COUNT_MAX_CHARS;
  return texts.map((text) => {
    if (text.length === 0) return 0;
    if (text.length > budget) {
      budget = 0;
      return Buffer.byteLength(text, 'utf8');
    }
    budget -= text.length;
    return countWithinBudget(text);
  });
}

function countWithinBudget(text: string): number {
  let runBytes = 0;
  const rest = text.replace(LONG_RUN, (run) => {
    runBytes += Buffer.byteLength(run, 'utf8');
    return ' ';
  });
  // countTokens is encode().length without the array of tokens: the same count, about a third cheaper.
  if (runBytes === 0) return countTokens(text, PLAIN_TEXT);
  return runBytes + (rest.trim().length === 0 ? 0 : countTokens(rest, PLAIN_TEXT));
}

/**
 * Texts are counted against a limit in segments of about this many characters, so that no BPE
 * piece is longer (the encoder's cost grows with the square of a piece's length).
 */
export const LIMIT_SEGMENT_CHARS = 1024;

/**
 * The tokens of a text (gpt-tokenizer, o200k_base) when they are at most `limit`, else undefined:
 * for checking a text against a hard limit, where `countTextTokens`'s byte fallback would refuse
 * text that fits. The text is encoded segment by segment and counting stops once past the limit,
 * so the work is bounded by the limit, not by the text's length. Segments end before a space that
 * follows a non-space character: the encoder's pre-tokenizer always starts a piece there, so the
 * count is exact. Only a run of `LIMIT_SEGMENT_CHARS / 2` or more characters without such a space
 * (CJK without punctuation, one repeated character) is cut elsewhere, which can move the count by
 * a token per cut.
 */
export function countTextTokensUpTo(text: string, limit: number): number | undefined {
  let count = 0;
  for (let start = 0; start < text.length;) {
    const end = segmentEnd(text, start);
    count += countTokens(text.slice(start, end), PLAIN_TEXT);
    if (count > limit) return undefined;
    start = end;
  }
  return count;
}

function segmentEnd(text: string, start: number): number {
  const hardEnd = start + LIMIT_SEGMENT_CHARS;
  if (hardEnd >= text.length) return text.length;
  for (let index = hardEnd; index > start + LIMIT_SEGMENT_CHARS / 2; index--) {
    if (text.charCodeAt(index) === 0x20 && !/\s/.test(text[index - 1])) return index;
  }
  const last = text.charCodeAt(hardEnd - 1);
  // Never split a surrogate pair: each half would count as a replacement character.
  return last >= 0xd800 && last <= 0xdbff ? hardEnd - 1 : hardEnd;
}
