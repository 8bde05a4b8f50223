import { encode } from 'gpt-tokenizer';
import type { CanonicalRequest } from '@gateway/canonical';
import type { DecisionQuestion } from './decision-validation';

/**
 * How one question becomes a one-token completion: the options get labels that are each a single
 * token, the prompt lists them, and its last line names them all. The engine then reads the
 * first generated token's top logprobs over exactly those labels.
 *
 * Labels (all single tokens in gpt-tokenizer's o200k_base; the letter labels also after a space):
 * - choice, 1..9 options: `1`..`9`;
 * - choice, 10..26 options: `A`..`Z`;
 * - choice, 27..255 options: `A`..`Z`, then the two-letter uppercase pairs that are single
 *   tokens, in alphabetical order (`AA`, `AB`, ...; 550 of the 676 pairs qualify, 229 are needed).
 *   Letters rather than numbers past 9, so that no label is the first digit of another
 *   (`1` / `12`) for backing models whose tokenizers split numbers into digits;
 * - score: the level digits `0`..`9` (at most 10 levels);
 * - noul: `yes` / `no`.
 *
 * Each question is asked twice: the options in request order, then reversed. Choice and score
 * labels go with the position, so in the reversed prompt the last option gets the first label
 * (for score this also cancels a preference for low or high digits). Noul keeps `yes` = true and
 * `no` = false and only swaps the order in which they are listed.
 */

export const ANSWER_LINE_PREFIX = 'Answer with exactly one of: ';

export const DECISION_SYSTEM_PROMPT =
  'You are a decision engine. You read facts and answer one question about them by choosing exactly one of the labelled options. ' +
  'Reply with the label only: no other words, punctuation or explanation.';

const DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9'];
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
const isSingleToken = (text: string): boolean => encode(text).length === 1 && encode(` ${text}`).length === 1;

let letterLabels: string[] | undefined;

/** `A`..`Z`, then the single-token two-letter pairs: 255 labels or more. */
function allLetterLabels(): string[] {
  if (!letterLabels) {
    const pairs = LETTERS.flatMap((first) => LETTERS.map((second) => first + second)).filter(isSingleToken);
    letterLabels = [...LETTERS, ...pairs];
  }
  return letterLabels;
}

/** The labels of a choice question with `count` options, in listing order. */
export function choiceLabels(count: number): string[] {
  if (count <= DIGITS.length) return DIGITS.slice(0, count);
  const labels = allLetterLabels();
  if (count > labels.length) throw new Error(`no single-token labels for ${count} options`);
  return labels.slice(0, count);
}

/** The labels of a score question with `count` levels. */
export function scoreLabels(count: number): string[] {
  return Array.from({ length: count }, (_, level) => String(level));
}

export const NOUL_LABELS = ['yes', 'no'] as const;

/** One of the two orderings in which a question is asked. */
export type Ordering = 'forward' | 'reversed';

/** One prompt: its text, and which option each label stands for (option index in request order). */
export interface LabelledPrompt {
  request: CanonicalRequest;
  /** Labels in listing order. */
  labels: string[];
  /** `optionOf[i]` is the option index (request order) that `labels[i]` stands for. */
  optionOf: number[];
  /** Labels are compared case-insensitively (yes/no). */
  caseInsensitive: boolean;
}

interface Listed {
  label: string;
  /** The option index in request order. */
  option: number;
  text: string;
}

/** The text shown for a description: strings as sent, objects/arrays as JSON; empty and null as nothing. */
export function descriptionText(description: unknown): string {
  if (description === null || description === undefined) return '';
  if (typeof description === 'string') return description.trim();
  if (typeof description === 'object' && Object.keys(description).length === 0) return '';
  return JSON.stringify(description);
}

function instructionsText(instructions: unknown): string {
  return typeof instructions === 'string' ? instructions : JSON.stringify(instructions);
}

/** The option lines, in listing order for `ordering`. */
function listOptions(question: DecisionQuestion, ordering: Ordering): { listed: Listed[]; caseInsensitive: boolean } {
  const reverse = <T>(items: T[]): T[] => (ordering === 'reversed' ? [...items].reverse() : items);
  switch (question.type) {
    case 'choice': {
      const labels = choiceLabels(question.options.length);
      const order = reverse(question.options.map((_, index) => index));
      const listed = order.map((option, position) => {
        const { id, description } = question.options[option];
        const text = descriptionText(description);
        return { label: labels[position], option, text: text ? `${id} — ${text}` : id };
      });
      return { listed, caseInsensitive: false };
    }
    case 'score': {
      const labels = scoreLabels(question.levels.length);
      const order = reverse(question.levels.map((_, index) => index));
      const listed = order.map((level, position) => ({
        label: labels[position],
        option: level,
        text: descriptionText(question.levels[level]) || `step ${level + 1} of ${question.levels.length}, counted from the lowest`,
      }));
      return { listed, caseInsensitive: false };
    }
    case 'noul': {
      const yes = descriptionText(question.criteria?.yes);
      const no = descriptionText(question.criteria?.no);
      // Option 0 is yes (true), option 1 is no (false), whatever the listing order.
      const both: Listed[] = [
        { label: 'yes', option: 0, text: yes },
        { label: 'no', option: 1, text: no },
      ];
      return { listed: reverse(both), caseInsensitive: true };
    }
  }
}

const KIND_HINT: Record<DecisionQuestion['type'], string> = {
  choice: 'Options (pick the one that fits best):',
  score: 'Options (levels of a scale; pick the level that fits best):',
  noul: 'Options:',
};

/**
 * The prompt of one question in one ordering: the facts (the request's `state` as JSON, so the
 * facts stay on one line and cannot pose as prompt structure), the instructions, the labelled
 * options and, last, `Answer with exactly one of: <labels>`. Sent as a one-token completion with
 * the top 20 logprobs at temperature 0.
 */
export function buildDecisionPrompt(state: unknown, question: DecisionQuestion, ordering: Ordering, model: string): LabelledPrompt {
  const { listed, caseInsensitive } = listOptions(question, ordering);
  const labels = listed.map((entry) => entry.label);
  const lines = [
    'Facts (JSON):',
    JSON.stringify(state),
    '',
    'Question:',
    instructionsText(question.instructions),
    '',
    KIND_HINT[question.type],
    ...listed.map((entry) => (entry.text ? `${entry.label}: ${entry.text}` : entry.label)),
    '',
    `${ANSWER_LINE_PREFIX}${labels.join(', ')}`,
  ];
  return {
    request: {
      model,
      system: DECISION_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: [{ type: 'text', text: lines.join('\n') }] }],
      maxTokens: 1,
      temperature: 0,
      logprobs: true,
      topLogprobs: 20,
      stream: false,
    },
    labels,
    optionOf: listed.map((entry) => entry.option),
    caseInsensitive,
  };
}
