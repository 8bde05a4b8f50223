import { ModerationCategories, type ModerationCategory } from '@gateway/contracts';
import type { ModerationVerdict } from '@gateway/canonical';
import { hash32 } from './simulator-random';

/**
 * The simulator's moderation: a small keyword lexicon per category, matched as whole words,
 * case-insensitively. `k` matches score `1 − 0.2^k` (one match 0.8, two 0.96, ...); a category
 * without a match scores a deterministic noise below 0.0001 derived from the text. A subcategory
 * lifts its parent to at least its own score (`violence/graphic` → `violence`, ...). A category
 * is true from 0.5; `flagged` is true when any category is. `sexual/minors` needs a sexual term
 * and a minor term (it scores by the fewer of the two). Documented in the README, API notes.
 */
export const MODERATION_LEXICON: Record<Exclude<ModerationCategory, 'sexual/minors'>, string[]> = {
  sexual: ['sex', 'sexual', 'porn', 'nude', 'naked', 'erotic', 'explicit'],
  hate: ['subhuman', 'inferior race', 'vermin', 'hate all', 'go back to your country'],
  harassment: ['idiot', 'stupid', 'loser', 'worthless', 'pathetic', 'moron'],
  'self-harm': ['self-harm', 'self harm', 'hurt myself', 'cut myself', 'suicide'],
  'hate/threatening': ['exterminate', 'wipe them out', 'ethnic cleansing'],
  'violence/graphic': ['gore', 'gory', 'dismember', 'dismembered', 'mutilate', 'mutilated', 'gruesome'],
  'self-harm/intent': ['want to die', 'kill myself', 'end my life'],
  'self-harm/instructions': ['how to kill myself', 'how to cut myself', 'ways to self-harm'],
  'harassment/threatening': ['i will hurt you', 'watch your back', 'you will regret', 'i will find you'],
  violence: ['kill', 'murder', 'attack', 'stab', 'shoot', 'assault', 'beat up'],
};

/** With a sexual term, these make `sexual/minors`. */
export const MINOR_TERMS = ['child', 'children', 'minor', 'minors', 'underage', 'kid', 'kids'];

export const MODERATION_THRESHOLD = 0.5;

const PARENTS: Partial<Record<ModerationCategory, ModerationCategory>> = {
  'sexual/minors': 'sexual',
  'hate/threatening': 'hate',
  'violence/graphic': 'violence',
  'self-harm/intent': 'self-harm',
  'self-harm/instructions': 'self-harm',
  'harassment/threatening': 'harassment',
};

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const matcher = (terms: string[]) => new RegExp(`(?<![\\p{L}\\p{N}])(?:${terms.map(escape).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
const MATCHERS = Object.fromEntries(Object.entries(MODERATION_LEXICON).map(([category, terms]) => [category, matcher(terms)])) as Record<
  keyof typeof MODERATION_LEXICON,
  RegExp
>;
const MINORS = matcher(MINOR_TERMS);

const countMatches = (pattern: RegExp, text: string) => text.match(pattern)?.length ?? 0;
const scoreFor = (matches: number) => 1 - 0.2 ** matches;

export function simulatedModeration(text: string): ModerationVerdict {
  const matches = {} as Record<ModerationCategory, number>;
  for (const category of Object.keys(MATCHERS) as (keyof typeof MATCHERS)[]) matches[category] = countMatches(MATCHERS[category], text);
  matches['sexual/minors'] = Math.min(matches.sexual, countMatches(MINORS, text));
  const scores = {} as Record<ModerationCategory, number>;
  for (const category of ModerationCategories) {
    scores[category] = matches[category] > 0 ? scoreFor(matches[category]) : (hash32(`${category}\u0000${text}`) / 2 ** 32) * 1e-4;
  }
  for (const [child, parent] of Object.entries(PARENTS) as [ModerationCategory, ModerationCategory][]) {
    scores[parent] = Math.max(scores[parent], scores[child]);
  }
  const categories = {} as Record<ModerationCategory, boolean>;
  for (const category of ModerationCategories) categories[category] = scores[category] >= MODERATION_THRESHOLD;
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores };
}
