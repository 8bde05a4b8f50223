import { randomInt } from './simulator-random';

/** The words simulated replies are made of: plain lowercase ASCII, one token each (with their leading space). */
export const SIMULATOR_VOCABULARY = [
  'model',
  'gateway',
  'request',
  'answer',
  'token',
  'stream',
  'route',
  'signal',
  'cache',
  'window',
  'context',
  'prompt',
  'reply',
  'message',
  'system',
  'value',
  'result',
  'detail',
  'simple',
  'quick',
  'steady',
  'clear',
  'bright',
  'quiet',
  'gentle',
  'careful',
  'useful',
  'honest',
  'small',
  'large',
  'river',
  'mountain',
  'forest',
  'garden',
  'harbor',
  'bridge',
  'lantern',
  'compass',
  'journey',
  'path',
  'moves',
  'holds',
  'shows',
  'brings',
  'keeps',
  'finds',
  'builds',
  'shapes',
  'guides',
  'follows',
  'and',
  'with',
  'through',
  'over',
  'under',
  'near',
  'the',
  'a',
  'every',
  'each',
];

/** Up to `maxWords` words (and 60 characters) of `text`, whitespace collapsed: shows the input reached the model. */
export function quote(text: string, maxWords = 8): string {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0);
  let quoted = words.slice(0, maxWords).join(' ');
  if (quoted.length > 60) quoted = quoted.slice(0, 60).trimEnd();
  return quoted.length < words.join(' ').length ? `${quoted}...` : quoted;
}

/** `count` vocabulary words as sentences of 5–9 words (fewer only when `count` is), capitalised, ending with a full stop. */
export function sentences(random: () => number, count: number): string {
  const result: string[] = [];
  let remaining = count;
  while (remaining > 0) {
    // Never leave fewer than 5 words for the last sentence.
    const length = remaining <= 9 ? remaining : randomInt(random, 5, Math.min(9, remaining - 5));
    const words = Array.from({ length }, () => SIMULATOR_VOCABULARY[randomInt(random, 0, SIMULATOR_VOCABULARY.length - 1)]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    result.push(`${words.join(' ')}.`);
    remaining -= length;
  }
  return result.join(' ');
}
