import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent } from '@gateway/contracts';
import { Decimal } from '@prisma/client/runtime/client';
import { priceUsage } from './pricing';

const catalog = ModelCatalog.fromYaml(
  `
models:
  - id: text
    pricing: { input: 0.5, output: 1.5 }
    endpoints: [chat.completions]
    routes: [{ adapter: simulator, upstream_model: x }]
  - id: cached
    pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
    endpoints: [messages]
    routes: [{ adapter: simulator, upstream_model: x }]
  - id: painter
    pricing: { input: 0, output: 0, per_item: 0.04 }
    endpoints: [images.generations]
    routes: [{ adapter: simulator, upstream_model: y }]
  - id: listener
    pricing: { input: 2.5, output: 10, per_second: 0.006 }
    endpoints: [audio.transcriptions]
    routes: [{ adapter: simulator, upstream_model: z }]
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

  it('prices cache reads and writes at their own prices, and only the rest of the input at the input price', () => {
    // 1000 uncached at 3, 2000 read at 0.3, 500 written at 3.75, 100 out at 15: (3000 + 600 + 1875 + 1500) / 1e6
    const priced = priceUsage(catalog, event({ model: 'cached', inputTokens: 3500, cacheReadTokens: 2000, cacheWriteTokens: 500, outputTokens: 100 }));
    expect(priced.credits.toString()).toBe('0.006975');
    expect(priced.inconsistent).toBeUndefined();
    expect(priceUsage(catalog, event({ model: 'cached', inputTokens: 1, cacheWriteTokens: 1 })).credits.toString()).toBe('0.00000375');
  });

  it('prices cache tokens at the input price when the catalog sets no cache prices', () => {
    const withCache = priceUsage(catalog, event({ inputTokens: 3, cacheReadTokens: 1, cacheWriteTokens: 1, outputTokens: 7 }));
    expect(withCache.credits.toString()).toBe(priceUsage(catalog, event({ inputTokens: 3, outputTokens: 7 })).credits.toString());
  });

  it('keeps exact decimals where binary floats would not', () => {
    // In floats, 7 × 0.3 / 1e6 is 0.0000021000000000000002.
    expect(priceUsage(catalog, event({ model: 'cached', inputTokens: 7, cacheReadTokens: 7 })).credits.toString()).toBe('0.0000021');
    const priced = priceUsage(catalog, event({ model: 'cached', inputTokens: 1_000_000, cacheReadTokens: 333_333 }));
    expect(priced.credits.toString()).toBe('2.1000009');
  });

  it('never charges negative input when an event reports more cache tokens than input tokens', () => {
    const priced = priceUsage(catalog, event({ model: 'cached', inputTokens: 10, cacheReadTokens: 20 }));
    expect(priced).toMatchObject({ known: true, inconsistent: true });
    expect(priced.credits.toString()).toBe('0.000006');
  });

  it('prices generated items at the model price per item', () => {
    expect(priceUsage(catalog, event({ model: 'painter', route: 'images.generations', units: 3 })).credits.toString()).toBe('0.12');
  });

  it('prices audio milliseconds at the model price per second, exactly, beside any tokens', () => {
    const audio = (fields: Partial<UsageRecordedEvent>) =>
      priceUsage(catalog, event({ model: 'listener', route: 'audio.transcriptions', ...fields })).credits.toString();
    expect(audio({ audioMs: 2500 })).toBe('0.015');
    expect(audio({ audioMs: 1 })).toBe('0.000006');
    expect(audio({ inputTokens: 1000, outputTokens: 200 })).toBe('0.0045');
    expect(audio({ audioMs: 2500, status: 'error' })).toBe('0');
  });

  it('charges nothing for failures, DevPass usage or unknown models (the last reported as unknown)', () => {
    expect(priceUsage(catalog, event({ model: 'painter', units: 2, status: 'error' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ model: 'painter', units: 2, keyType: 'dev' })).credits.toString()).toBe('0');
    expect(priceUsage(catalog, event({ model: 'gone', inputTokens: 5 }))).toMatchObject({ known: false });
  });

  it('prices every mix of quantities as the formula written out term by term does, to the last digit', () => {
    // The formula of the pricing docs, every term computed (a zero quantity included).
    const d = (value: number | undefined) => new Decimal(String(value ?? 0));
    const reference = (fields: Partial<UsageRecordedEvent>): string => {
      const e = event(fields);
      const p = catalog.get(e.model)!.config.pricing;
      const uncached = Decimal.max(0, d(e.inputTokens).minus(d(e.cacheReadTokens)).minus(d(e.cacheWriteTokens)));
      const tokens = uncached
        .times(d(p.input))
        .plus(d(e.cacheReadTokens).times(d(p.cache_read ?? p.input)))
        .plus(d(e.cacheWriteTokens).times(d(p.cache_write ?? p.input)))
        .plus(d(e.outputTokens).times(d(p.output)))
        .dividedBy(1_000_000);
      return tokens
        .plus(d(e.units).times(d(p.per_item)))
        .plus(d(e.audioMs).times(d(p.per_second)).dividedBy(1000))
        .plus(d(e.characters).times(d(p.characters)).dividedBy(1_000_000))
        .toString();
    };
    const quantities = [undefined, 0, 1, 7, 999_999, 123_456_789_012];
    let compared = 0;
    for (const model of ['text', 'cached', 'painter', 'listener'])
      for (const inputTokens of quantities)
        for (const cacheReadTokens of quantities)
          for (const outputTokens of quantities)
            for (const extra of [{}, { cacheWriteTokens: 3 }, { units: 2 }, { audioMs: 1501 }, { characters: 77 }]) {
              const fields = { model, inputTokens: inputTokens ?? 0, cacheReadTokens, outputTokens: outputTokens ?? 0, ...extra };
              expect(`${model} ${JSON.stringify(fields)} ${priceUsage(catalog, event(fields)).credits.toString()}`).toBe(
                `${model} ${JSON.stringify(fields)} ${reference(fields)}`,
              );
              compared++;
            }
    expect(compared).toBe(4 * 6 * 6 * 6 * 5);
  });
});
