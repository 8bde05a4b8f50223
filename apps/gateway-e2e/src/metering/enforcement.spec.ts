import { connect, JSONCodec } from 'nats';
import { randomUUID } from 'node:crypto';
import { api, createAccount, createProxyKey, sleep } from '../support/api';
import { storedKey } from '../support/keys-db';
import { suiteInfo } from '../support/suite-info';

const PRICE = { input: 0.5, output: 1.5 }; // sim-chat, credits per million tokens
const BODY = { model: 'sim-chat', max_tokens: 40, messages: [{ role: 'user', content: 'budget probe' }] };
const priceOf = (usage: { prompt_tokens: number; completion_tokens: number }) =>
  (usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output) / 1_000_000;

/** The real cost of BODY: the simulator is deterministic, so every identical request costs the same. */
async function costOfOneRequest(): Promise<number> {
  const probe = createAccount('enterprise', '10');
  const response = await api('POST', '/v1/chat/completions', { key: probe.masterKey, body: BODY });
  expect(response.status).toBe(200);
  return priceOf(response.body.usage);
}

const toCredits = (value: number) => Number(value.toFixed(8));

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, attempts = 300): Promise<T> {
  let value = await read();
  for (let i = 0; i < attempts && !done(value); i++) {
    await sleep(100);
    value = await read();
  }
  return value;
}

describe('enforcement: budgets and rate limits', () => {
  let unitCost: number;

  beforeAll(async () => {
    unitCost = await costOfOneRequest();
  });

  it('200 concurrent requests on a proxy key whose allocation covers 20: at most 20 succeed, the rest get 402', async () => {
    const owner = createAccount('enterprise', '1000');
    const allocation = toCredits(unitCost * 20);
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: allocation });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api('POST', '/v1/chat/completions', {
          key: proxy.key,
          body: i % 2 ? BODY : { ...BODY, stream: true },
          base: i % 3 ? suiteInfo().edgeA : suiteInfo().edgeB,
        }),
      ),
    );
    const succeeded = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status !== 200);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeLessThanOrEqual(20);
    for (const response of refused) {
      expect(response.status).toBe(402);
      expect(response.body.error).toMatchObject({ type: 'insufficient_quota', code: 'allocation_exhausted' });
      expect(response.body.error.message).toMatch(/^Proxy key allocation exhausted/);
    }
    const lookup = () => api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } });
    const record = await waitFor(lookup, (r) => Math.abs(r.body.used_ammount - succeeded.length * unitCost) < 1e-9);
    expect(record.body.used_ammount).toBeLessThanOrEqual(record.body.allocated_ammount + 1e-12);
    expect(Math.abs(record.body.used_ammount - succeeded.length * unitCost)).toBeLessThan(1e-9);
  });

  it('the same against account credits, streamed or not: credits never go below zero', async () => {
    const owner = createAccount('enterprise', String(toCredits(unitCost * 20)));
    const { edgeA, edgeB } = suiteInfo();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api('POST', '/v1/chat/completions', { key: owner.masterKey, base: i % 4 < 2 ? edgeA : edgeB, body: i % 2 ? BODY : { ...BODY, stream: true } }),
      ),
    );
    const succeeded = results.filter((result) => result.status === 200);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeLessThanOrEqual(20);
    const refused = results.filter((result) => result.status !== 200);
    expect(refused.length).toBe(200 - succeeded.length);
    for (const response of refused) {
      expect(response.status).toBe(402);
      expect(response.body.error.code).toBe('insufficient_credits');
    }
    const me = await waitFor(
      () => api('GET', '/v1/user/me', { key: owner.masterKey }),
      (r) => r.body.endpoints['chat.completions'] === succeeded.length,
    );
    expect(me.body.credits).toBeGreaterThanOrEqual(-1e-12);
  });

  it('answers 402 in the Anthropic shape on /v1/messages', async () => {
    const owner = createAccount('basic', '0');
    const response = await api('POST', '/v1/messages', {
      headers: { 'x-api-key': owner.masterKey },
      body: { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBe(402);
    expect(response.body).toEqual({ type: 'error', error: { type: 'billing_error', message: expect.stringMatching(/^Insufficient credits/) } });
  });

  it('decisions count toward the requests-per-minute limit like any request', async () => {
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 10) await sleep(secondsLeft * 1000 + 200); // stay inside one minute window
    const account = createAccount('free', '5');
    const remaining = (response: { headers: Headers }) => Number(response.headers.get('x-ratelimit-remaining-requests'));
    const before = await api('GET', '/v1/models', { key: account.masterKey });
    const decision = await api('POST', '/v1/systemone', {
      key: account.masterKey,
      body: { state: 'a ripe banana', questions: { fresh: { type: 'noul', instructions: 'Is it fresh?' } } },
    });
    expect(decision.status).toBe(200);
    expect(remaining(decision)).toBe(remaining(before) - 1);
    const after = await api('GET', '/v1/models', { key: account.masterKey });
    expect(remaining(after)).toBe(remaining(before) - 2);
  });

  it('two edge replicas share one rate limit: exactly N successes, then 429 with Retry-After', async () => {
    const limit = 40; // the free plan in this suite (PLAN_RATE_LIMITS)
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 15) await sleep(secondsLeft * 1000 + 200); // stay inside one minute window
    const account = createAccount('free', '5');
    const { edgeA, edgeB } = suiteInfo();
    const secondsLeftInMinute = () => 60 - new Date().getUTCSeconds();
    const leftBefore = secondsLeftInMinute();
    const results = await Promise.all(
      Array.from({ length: limit + 15 }, (_, i) => api('GET', '/v1/models', { key: account.masterKey, base: i % 2 ? edgeA : edgeB })),
    );
    const leftAfter = secondsLeftInMinute();
    const ok = results.filter((result) => result.status === 200);
    const limited = results.filter((result) => result.status === 429);
    expect(ok).toHaveLength(limit);
    expect(limited).toHaveLength(15);
    for (const response of limited) {
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The seconds left in the minute window the requests were counted in.
      expect(retryAfter).toBeGreaterThanOrEqual(leftAfter - 1);
      expect(retryAfter).toBeLessThanOrEqual(leftBefore + 1);
      expect(response.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    }
    const first = ok[0];
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe(String(limit));
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('10000000');
    // /user/me polled once a minute does not use the quota, even when it is spent.
    expect((await api('GET', '/v1/user/me', { key: account.masterKey })).status).toBe(200);
  });

  it('resets a weekly window: spend from an earlier week no longer counts (clock injected through event times)', async () => {
    const owner = createAccount('pro', '100');
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 50, spend_window: 'weekly' });
    const key = await storedKey(proxy.key);
    const nats = await connect({ servers: suiteInfo().env.NATS_URL });
    const js = nats.jetstream();
    const codec = JSONCodec();
    const publish = (when: string, outputTokens: number) =>
      js.publish(
        'usage.recorded',
        codec.encode({
          requestId: `req_clock_${randomUUID()}`,
          accountId: owner.accountId,
          keyId: key.id,
          keyType: 'proxy',
          maskedKey: key.maskedKey,
          model: 'sim-chat',
          route: 'chat.completions',
          inputTokens: 0,
          outputTokens,
          status: 'success',
          ip: '127.0.0.1',
          timestamp: Math.floor(Date.parse(when) / 1000),
        }),
      );
    const used = async () => (await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } })).body.used_ammount;
    try {
      await publish('2030-01-07T10:00:00Z', 1_000_000); // Monday, week 1: 1.5 credits
      await publish('2030-01-11T10:00:00Z', 2_000_000); // Friday, week 1: 3
      expect(await waitFor(used, (value) => value === 4.5)).toBe(4.5);
      await publish('2030-01-15T10:00:00Z', 4_000_000); // Tuesday, week 2: the window starts afresh
      expect(await waitFor(used, (value) => value === 6)).toBe(6);
      await publish('2030-01-12T23:00:00Z', 2_000_000); // a late event from week 1 does not count now
      await sleep(1000);
      expect(await used()).toBe(6);
    } finally {
      await nats.close();
    }
  });

  it('charges a cancelled stream for the tokens it generated', async () => {
    const owner = createAccount('pro', '10');
    const controller = new AbortController();
    const response = await fetch(`${suiteInfo().edgeA}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-slow', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    for (let i = 0; i < 4; i++) await reader.read();
    controller.abort();
    const logs = await waitFor(
      () => api('GET', '/v1/user/logs', { key: owner.masterKey }),
      (r) => Array.isArray(r.body) && r.body.length === 1,
    );
    const [entry] = logs.body;
    expect(entry.status).toBe('cancelled');
    expect(entry.output_tokens).toBeGreaterThan(0);
    expect(entry.credits).toBeGreaterThan(0);
  });
});
