import { ModelCatalog } from '@gateway/catalog';
import { countTextTokens } from '@gateway/platform';
import { estimateSpeechCost } from './speech-cost';

const catalog = ModelCatalog.fromYaml(
  `
models:
  - id: tts
    pricing: { input: 0, output: 0, characters: 15 }
    endpoints: [audio.speech]
    routes: [{ adapter: simulator, upstream_model: x }]
  - id: token-tts
    max_output_tokens: 2000
    pricing: { input: 0.6, output: 12, characters: 15 }
    endpoints: [audio.speech]
    routes: [{ adapter: simulator, upstream_model: x }]
`,
  {},
  () => undefined,
);

describe('estimateSpeechCost', () => {
  it("reserves the input's characters (code points) at the character price, logged under audio.speech", () => {
    const estimate = estimateSpeechCost(catalog, { model: 'tts', input: 'héllo 😀', voice: 'alloy' });
    expect(estimate).toMatchObject({ model: 'tts', route: 'audio.speech' });
    expect(estimate!.credits).toBeCloseTo((7 * 15) / 1e6, 15);
    expect(estimate!.tokens).toBeGreaterThanOrEqual(7);
  });

  it('adds the token worst case for an upstream that reports tokens: text tokens and max_output_tokens of audio', () => {
    const body = { model: 'token-tts', input: 'Hello there, general.', instructions: 'cheerful', voice: 'alloy' };
    const tokens = countTextTokens(body.input) + countTextTokens(body.instructions);
    expect(estimateSpeechCost(catalog, body)!.credits).toBeCloseTo((21 * 15 + tokens * 0.6 + 2000 * 12) / 1e6, 12);
  });

  it('is null for a model not in the catalog, or no model named (nothing is reserved; the request is refused later)', () => {
    expect(estimateSpeechCost(catalog, { model: 'nope', input: 'x' })).toBeNull();
    expect(estimateSpeechCost(catalog, { input: 'x' })).toBeNull();
  });

  it('bounds a body whose input is not a string by the whole body', () => {
    const estimate = estimateSpeechCost(catalog, { model: 'tts', input: ['a', 'b'] });
    expect(estimate!.credits).toBeGreaterThan(0);
  });
});
