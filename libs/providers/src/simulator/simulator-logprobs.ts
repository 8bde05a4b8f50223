import type { TokenLogprob } from '@gateway/canonical';
import type { TokenPiece } from '../token-count';
import { hash32 } from './simulator-random';
import { SIMULATOR_VOCABULARY } from './simulator-text';

/**
 * Log probabilities for emitted pieces: one entry per piece (a piece is one token, or a few when
 * a character spans tokens), chosen-token logprob in [-1.5, -0.001] from a hash of the reply key,
 * position and text. With `topLogprobs`, the chosen token plus vocabulary alternatives sharing the
 * remaining probability mass (halving each time), most likely first. Every value is ≤ 0.
 */
export function pieceLogprobs(seedKey: string, pieces: TokenPiece[], topLogprobs = 0): TokenLogprob[] {
  return pieces.map((piece, position) => {
    const hash = hash32(`${seedKey}\u0000${position}\u0000${piece.text}`);
    const logprob = -round4(0.001 + ((hash % 1000) / 1000) * 1.499);
    const entry: TokenLogprob = { token: piece.text, logprob };
    if (topLogprobs > 0) entry.topLogprobs = alternatives(piece.text, logprob, topLogprobs, hash);
    return entry;
  });
}

function alternatives(token: string, logprob: number, count: number, hash: number): { token: string; logprob: number }[] {
  const remainingMass = 1 - Math.exp(logprob);
  const result = [{ token, logprob }];
  for (let k = 0; result.length < count && k < SIMULATOR_VOCABULARY.length; k++) {
    const candidate = ` ${SIMULATOR_VOCABULARY[(hash + k * 7) % SIMULATOR_VOCABULARY.length]}`;
    if (result.some((entry) => entry.token === candidate)) continue;
    result.push({ token: candidate, logprob: round4(Math.log(remainingMass) - result.length * Math.LN2) });
  }
  return result.sort((a, b) => b.logprob - a.logprob);
}

/**
 * A deterministic probability distribution over candidate next tokens, as a model would give
 * for "the prompt is followed by one of these tokens" — for the decision engine, which asks a
 * model to pick among options (e.g. `["yes", "no"]`) and reads the logprobs.
 *
 * Each distinct candidate gets a logit in [0, 8) from a 32-bit hash of `prompt` + candidate, and
 * the logits are softmax-normalised: the probabilities (`Math.exp(logprob)`) sum to 1, and every
 * logprob is ≤ 0. The same prompt and candidates always give the same result, whatever order the
 * candidates come in; duplicates are counted once. Sorted most likely first (ties: input order).
 */
export function simulatorTokenLogprobs(prompt: string, candidates: string[]): { token: string; logprob: number }[] {
  const unique = [...new Set(candidates)];
  if (unique.length === 0) return [];
  const logits = unique.map((token) => (hash32(`${prompt}\u0000${token}`) / 2 ** 32) * 8);
  const max = Math.max(...logits);
  const logTotal = max + Math.log(logits.reduce((sum, logit) => sum + Math.exp(logit - max), 0));
  return unique.map((token, index) => ({ token, logprob: Math.min(0, logits[index] - logTotal) })).sort((a, b) => b.logprob - a.logprob);
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
