import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent } from '@gateway/contracts';
import { priceUsage, worstCaseCredits } from './pricing';

const catalog = ModelCatalog.fromYaml(
  `
models:
  - id: tts
    pricing: { input: 0.6, output: 12, characters: 15 }
    endpoints: [audio.speech]
    routes: [{ adapter: simulator, upstream_model: x }]
  - id: tokens-only
    pricing: { input: 0.6, output: 12 }
    endpoints: [audio.speech]
    routes: [{ adapter: simulator, upstream_model: x }]
`,
  {},
  () => undefined,
);

const event = (overrides: Partial<UsageRecordedEvent>): UsageRecordedEvent => ({
  requestId: 'r',
  accountId: 'a',
  keyId: 'k',
  keyType: 'master',
  maskedKey: 'ek-...abcd',
  model: 'tts',
  route: 'audio.speech',
  inputTokens: 0,
  outputTokens: 0,
  status: 'success',
  ip: '127.0.0.1',
  timestamp: 0,
  ...overrides,
});

describe('speech pricing', () => {
  it('prices input characters per million, in exact decimals', () => {
    expect(priceUsage(catalog, event({ characters: 7 })).credits.toString()).toBe('0.000105');
    expect(priceUsage(catalog, event({ characters: 4096 })).credits.toString()).toBe('0.06144');
  });

  it('prices the tokens an upstream reported instead, when the event carries no characters', () => {
    // 10 input tokens at 0.6 and 250 audio tokens at 12: (6 + 3000) / 1e6
    expect(priceUsage(catalog, event({ inputTokens: 10, outputTokens: 250 })).credits.toString()).toBe('0.003006');
  });

  it('keeps exact decimals where floats would not', () => {
    const odd = ModelCatalog.fromYaml(
      'models:\n  - id: odd\n    pricing: { input: 0, output: 0, characters: 0.3 }\n    endpoints: [audio.speech]\n    routes: [{ adapter: simulator, upstream_model: x }]\n',
      {},
      () => undefined,
    );
    expect((7 * 0.3) / 1e6).not.toBe(0.0000021);
    expect(priceUsage(odd, event({ model: 'odd', characters: 7 })).credits.toString()).toBe('0.0000021');
  });

  it('charges nothing for characters of a failed request, a DevPass key, or a model without a character price', () => {
    expect(priceUsage(catalog, event({ characters: 100, status: 'error' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ characters: 100, keyType: 'dev' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ model: 'tokens-only', characters: 100 })).credits.toString()).toBe('0');
  });

  it('charges a cancelled request its characters', () => {
    expect(priceUsage(catalog, event({ characters: 100, status: 'cancelled' })).credits.toString()).toBe('0.0015');
  });

  it('bounds a reservation by the characters plus the token worst case', () => {
    const pricing = catalog.get('tts')!.config.pricing;
    expect(worstCaseCredits(pricing, { characters: 1000 })).toBeCloseTo(0.015, 12);
    expect(worstCaseCredits(pricing, { characters: 1000, inputTokens: 300, outputTokens: 2000 })).toBeCloseTo(0.015 + (300 * 0.6 + 2000 * 12) / 1e6, 12);
    expect(worstCaseCredits(catalog.get('tokens-only')!.config.pricing, { characters: 1000 })).toBe(0);
  });
});
