import { countTokens } from '@gateway/providers';
import { countDeltaTokens } from './delta-tokens';

describe('countDeltaTokens', () => {
  it('counts like countTokens, remembered or not, short and long deltas, special-token text included', () => {
    const deltas = [' the', ' the', 'Hello', '', '<|endoftext|>', ' 東京', '🙂🙂', 'x'.repeat(33), ' antidisestablishmentarianism'];
    for (const delta of [...deltas, ...deltas]) expect(countDeltaTokens(delta)).toBe(countTokens(delta));
  });

  it('keeps counting right past the cache bound', () => {
    for (let i = 0; i < 25_000; i++) expect(countDeltaTokens(` w${i}`)).toBe(countTokens(` w${i}`));
  });
});
