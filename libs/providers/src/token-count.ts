import { countTextsTokens, countTextTokens, countTextTokensUpTo } from '@gateway/platform';
import { decodeGenerator, encode } from 'gpt-tokenizer';
import type { CanonicalRequest, ToolCall, Usage } from '@gateway/canonical';

/**
 * Token counting with gpt-tokenizer (o200k_base, the GPT-4o/GPT-5 encoding). Exact for OpenAI
 * models, an estimate for others — used where an upstream does not report usage (so metering
 * never sees zero for a real exchange) and by the simulator.
 */

/**
 * User text may legitimately contain strings such as `<|endoftext|>`; gpt-tokenizer throws on
 * them by default. Counting them as plain text is what we want.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** The same count the edge uses for budgets and rate limits. */
export const countTokens = countTextTokens;
export { countTextsTokens };

/**
 * Exact tokens of a text at any length, where the text is bounded already: what the gateway
 * generated itself (the simulator's replies, reasoning and tool arguments) or inputs held to a
 * token limit (the simulator's embeddings). `countTokens` counts a text past 8,192 characters by
 * its UTF-8 bytes, an upper bound meant for unbounded client text. The work is still linear (see
 * `countTextTokensUpTo`).
 */
export const countExactTokens = (text: string): number => countTextTokensUpTo(text, Number.POSITIVE_INFINITY) ?? 0;

/** A run of text that decodes cleanly on its own, and how many tokens it spans (usually 1). */
export interface TokenPiece {
  text: string;
  tokens: number;
}

/**
 * Splits text into token-sized pieces whose concatenation is the text. A token can end inside a
 * multi-byte character (emoji, CJK); such tokens are grouped with the next one so that every
 * piece is valid text. We decode the whole token list in one pass on purpose: gpt-tokenizer's
 * decoder keeps partial-character bytes in shared state, so decoding a slice that ends
 * mid-character would corrupt later decodes.
 */
export function splitTokenPieces(text: string): TokenPiece[] {
  const tokens = text.length === 0 ? [] : encode(text, PLAIN_TEXT);
  let consumed = 0;
  // decodeGenerator pulls tokens lazily, so counting pulls tells us how many tokens each yielded chunk spans.
  const counted = {
    *[Symbol.iterator]() {
      for (const token of tokens) {
        consumed++;
        yield token;
      }
    },
  };
  const pieces: TokenPiece[] = [];
  let before = 0;
  for (const chunk of decodeGenerator(counted)) {
    pieces.push({ text: chunk, tokens: consumed - before });
    before = consumed;
  }
  return pieces;
}

/** The texts a prompt consists of: system, message texts, tool calls and tool results (images are not counted). */
export function promptTexts(request: CanonicalRequest): string[] {
  const texts: string[] = request.system ? [request.system] : [];
  for (const message of request.messages) {
    switch (message.role) {
      case 'system':
      case 'tool':
        texts.push(message.content);
        break;
      case 'user':
      case 'assistant':
        for (const part of message.content) {
          if (part.type === 'text' || part.type === 'thinking') texts.push(part.text);
        }
        if (message.role === 'assistant') texts.push(...toolCallTexts(message.toolCalls ?? []));
        break;
    }
  }
  return texts;
}

/** Input tokens of a request: the sum over its texts (no per-message chat-format overhead), in bounded time. */
export function countPromptTokens(request: CanonicalRequest): number {
  return countTextsTokens(promptTexts(request)).reduce((sum, tokens) => sum + tokens, 0);
}

/** What a model produced, for counting output tokens. */
export interface GeneratedOutput {
  text: string;
  reasoning?: string;
  toolCalls: ToolCall[];
}

/**
 * Output tokens: text + reasoning + tool call names and arguments (reasoning is billed as output).
 * `count`: `countExactTokens` for output the gateway generated itself.
 */
export function countOutputTokens(output: GeneratedOutput, count: (text: string) => number = countTokens): number {
  const texts = [output.text, output.reasoning ?? '', ...toolCallTexts(output.toolCalls)];
  return texts.reduce((sum, text) => sum + count(text), 0);
}

/**
 * The upstream's usage where it reported one, with our own count filling in what it omitted
 * (no usage at all, or zero input/output for a non-empty exchange).
 */
export function completeUsage(reported: Usage | undefined, request: CanonicalRequest, output: GeneratedOutput): Usage {
  if (reported && reported.inputTokens > 0 && reported.outputTokens > 0) return reported;
  const usage: Usage = reported
    ? { ...reported }
    : { inputTokens: 0, outputTokens: 0, ...(output.reasoning ? { reasoningTokens: countTokens(output.reasoning) } : {}) };
  if (usage.inputTokens === 0) usage.inputTokens = countPromptTokens(request);
  if (usage.outputTokens === 0) usage.outputTokens = countOutputTokens(output);
  return usage;
}

function toolCallTexts(toolCalls: ToolCall[]): string[] {
  return toolCalls.flatMap((call) => [call.name, call.arguments]);
}
