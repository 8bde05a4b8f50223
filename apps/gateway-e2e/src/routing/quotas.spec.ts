/**
 * Provider quotas per route (`rpm` here), shared by the router replicas in Redis: a route at its
 * quota is skipped for the next one; when every route is at quota the client gets a 429 with
 * `Retry-After`, in its own format's error shape.
 */
import { api, createAccount, sleep, TestAccount } from '../support/api';
import { callsDuring, chat } from './pools';

/** Quotas count per calendar minute: start a test early in one, so its requests share it. */
async function earlyInAMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await sleep(left + 50);
}

describe('routing: provider quotas', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('skips a route at its rpm quota for the next one', async () => {
    await earlyInAMinute();
    const calls = await callsDuring(async () => {
      for (let i = 0; i < 7; i++) expect((await chat(account.masterKey, 'route-quota', `quota request ${i}`)).status).toBe(200);
    });
    expect(calls).toEqual({ 'pool-quota-capped': 3, 'pool-quota-spill': 4 });
  });

  it('answers 429 with Retry-After when every route is at its quota, in the client’s format', async () => {
    await earlyInAMinute();
    const calls = await callsDuring(async () => {
      for (let i = 0; i < 3; i++) expect((await chat(account.masterKey, 'route-quota-all', `quota-all request ${i}`)).status).toBe(200);
    });
    expect(calls).toEqual({ 'pool-quota-all-one': 2, 'pool-quota-all-two': 1 });

    const refused = await chat(account.masterKey, 'route-quota-all', 'one too many');
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.body.error.message).toMatch(/quota/);

    const messages = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: { model: 'route-quota-all', max_tokens: 16, messages: [{ role: 'user', content: 'and in messages' }] },
    });
    expect(messages.status).toBe(429);
    expect(Number(messages.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});
