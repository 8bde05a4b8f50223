import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent } from '@gateway/contracts';
import { priceUsage } from './pricing';

const catalog = ModelCatalog.fromYaml(
  `
models:
  - id: text
    pricing: { input: 0.5, output: 1.5 }
    endpoints: [chat.completions]
    routes: [{ adapter: simulator, upstream_model: x }]
  - id: painter
    pricing: { input: 0, output: 0, per_item: 0.04 }
    endpoints: [images.generations]
    routes: [{ adapter: simulator, upstream_model: y }]
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
  model: 'text',
  route: 'chat.completions',
  inputTokens: 0,
  outputTokens: 0,
  status: 'success',
  ip: '127.0.0.1',
  timestamp: 0,
  ...overrides,
});

describe('priceUsage', () => {
  it('prices tokens per million in exact decimals', () => {
    expect(priceUsage(catalog, event({ inputTokens: 3, outputTokens: 7 })).credits.toString()).toBe('0.000012');
  });

  it('prices generated items at the model price per item', () => {
    expect(priceUsage(catalog, event({ model: 'painter', route: 'images.generations', units: 3 })).credits.toString()).toBe('0.12');
  });

  it('charges nothing for failures, DevPass usage or unknown models (the last reported as unknown)', () => {
    expect(priceUsage(catalog, event({ model: 'painter', units: 2, status: 'error' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ model: 'painter', units: 2, keyType: 'dev' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ model: 'gone', inputTokens: 5 }))).toMatchObject({ known: false });
  });
});
