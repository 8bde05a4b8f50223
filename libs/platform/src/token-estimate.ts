import { encode } from 'gpt-tokenizer';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Tokens of a text with gpt-tokenizer (o200k_base): exact for OpenAI models, an estimate for others. */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : encode(text, PLAIN_TEXT).length;
}
