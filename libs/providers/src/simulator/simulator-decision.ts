import type { CanonicalRequest } from '@gateway/canonical';
import { countPromptTokens, countTokens } from '../token-count';
import { simulatorTokenLogprobs } from './simulator-logprobs';
import type { SimulatedTurn } from './simulator-turn';

const ANSWER_LINE = /^\s*Answer with exactly one of:\s*(.+?)\s*$/;

/**
 * The labels of a decision prompt: the last line of the last user message of the form
 * `Answer with exactly one of: a, b, c` (comma-separated, trimmed, duplicates once).
 */
export function decisionLabels(request: CanonicalRequest): string[] | undefined {
  const text = lastUserText(request);
  if (text === undefined) return undefined;
  const line = text
    .split(/\r?\n/)
    .reverse()
    .map((candidate) => ANSWER_LINE.exec(candidate))
    .find((match) => match !== null);
  if (!line) return undefined;
  const labels = [
    ...new Set(
      line[1]
        .split(',')
        .map((label) => label.trim())
        .filter((label) => label.length > 0),
    ),
  ];
  return labels.length > 0 ? labels : undefined;
}

/**
 * A decision prompt answered like a real model asked for one token with logprobs: when the
 * request has `logprobs`, `maxTokens === 1` and an answer line (see `decisionLabels`), the one
 * generated token is the most likely label and its top logprobs are `simulatorTokenLogprobs`
 * over the labels, keyed by the last user message (deterministic per prompt), cut to
 * `topLogprobs`. Otherwise undefined, and the simulator replies as usual.
 */
export function simulateDecisionTurn(request: CanonicalRequest): SimulatedTurn | undefined {
  if (!request.logprobs || request.maxTokens !== 1) return undefined;
  const labels = decisionLabels(request);
  if (!labels) return undefined;
  const distribution = simulatorTokenLogprobs(lastUserText(request) ?? '', labels);
  const [top] = distribution;
  const topLogprobs = request.topLogprobs ?? 0;
  return {
    reasoning: [],
    text: [{ text: top.token, tokens: countTokens(top.token) }],
    logprobs: [topLogprobs > 0 ? { ...top, topLogprobs: distribution.slice(0, topLogprobs) } : { ...top }],
    toolCalls: [],
    // One token was all it could write.
    stopReason: 'length',
    usage: { inputTokens: countPromptTokens(request), outputTokens: countTokens(top.token) },
  };
}

function lastUserText(request: CanonicalRequest): string | undefined {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index];
    if (message.role === 'user') return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  }
  return undefined;
}
