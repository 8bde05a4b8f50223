import { isStorableText } from '../validation';
import { printable, storableJson, storableText, usageEventProblem } from './usage-event.validation';
import { type UsageRecordedEvent, usageMessageId, usageVoid } from './usage.events';

const event = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  requestId: 'req_1',
  accountId: 'acct_1',
  keyId: 'key_1',
  keyType: 'proxy',
  maskedKey: 'ek-proxy-...abcd',
  model: 'sim-chat',
  route: 'chat.completions',
  inputTokens: 10,
  outputTokens: 20,
  status: 'success',
  ip: '127.0.0.1',
  timestamp: 1_790_000_000,
  ...fields,
});

describe('usage event validation', () => {
  it('accepts what the router, the edge and the video worker publish, unknown fields included', () => {
    expect(usageEventProblem(event())).toBeUndefined();
    expect(
      usageEventProblem(event({ cacheReadTokens: 5, cacheWriteTokens: null, units: 1, provider: 'openai', upstreamRoute: 'm/0', later: 'x' })),
    ).toBeUndefined();
    expect(usageEventProblem(event({ model: 'emoji 😀 and 漢字' }))).toBeUndefined();
  });

  it.each([
    ['model', 'a\u0000b'],
    ['route', '\ud800'],
    ['keyId', 'k\udc00'],
    ['upstreamRoute', 'x\u0000'],
    ['clientRequestId', '\ud83d'],
  ])('refuses text PostgreSQL cannot store in %s', (field, text) => {
    expect(usageEventProblem(event({ [field]: text }))).toEqual({ field, message: expect.stringContaining(field), unstorableText: true });
  });

  it.each([
    [null, 'event'],
    [[1], 'event'],
    [event({ requestId: '' }), 'requestId'],
    [event({ model: 3 }), 'model'],
    [event({ keyType: 'root' }), 'keyType'],
    [event({ status: 'ok' }), 'status'],
    [event({ inputTokens: 2 ** 31 }), 'inputTokens'],
    [event({ outputTokens: -1 }), 'outputTokens'],
    [event({ outputTokens: 1.5 }), 'outputTokens'],
    [event({ units: '2' }), 'units'],
    [event({ timestamp: Number.NaN }), 'timestamp'],
    [event({ timestamp: 1e300 }), 'timestamp'],
    [event({ voids: false }), 'voids'],
    [event({ voids: true, status: 'success' }), 'status'],
  ])('refuses an invalid event (%#): %s', (value, field) => {
    expect(usageEventProblem(value)).toMatchObject({ field, unstorableText: false });
  });

  it("accepts the edge's void: an error of no tokens, under its own message id", () => {
    const voided = usageVoid(event({}) as unknown as UsageRecordedEvent, { model: 'm', route: 'chat.completions' });
    expect(voided).toMatchObject({ status: 'error', inputTokens: 0, outputTokens: 0, voids: true });
    expect(usageEventProblem(voided)).toBeUndefined();
    expect(usageMessageId(voided)).toBe(`${voided.requestId}:void`);
    expect(usageMessageId(event({}) as unknown as UsageRecordedEvent)).toBe(voided.requestId);
  });

  it('makes text storable with U+FFFD, keeping surrogate pairs, and escapes it for logs', () => {
    expect(storableText('a\u0000b\ud800c\udc00😀')).toBe('a\uFFFDb\uFFFDc\uFFFD😀');
    expect(isStorableText(storableText('\u0000\ud800'))).toBe(true);
    const sanitized = storableJson(event({ model: 'm\u0000', extra: { 'k\u0000': ['\ud800'] } }));
    expect(sanitized).toMatchObject({ model: 'm\uFFFD', extra: { 'k\uFFFD': ['\uFFFD'] } });
    expect(usageEventProblem(storableJson(event({ model: 'm\u0000' })) as unknown as UsageRecordedEvent)).toBeUndefined();
    expect(printable('a\u0000b\ud800"\n')).toBe('a\\u0000b\\ud800\\"\\n');
    expect(printable('x'.repeat(10), 4)).toBe('xxxx…');
  });
});
