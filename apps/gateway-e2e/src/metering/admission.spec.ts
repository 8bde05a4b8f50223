/**
 * The edge admits a metered request in one Redis script: the revocation epoch of the caller's
 * cached key, the plan's rate limit and the budget reservation, all or nothing.
 */
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import { api, ApiResponse, createAccount, createDevPass, createProxyKey, sleep } from '../support/api';
import { suiteInfo } from '../support/suite-info';

const CHAT = { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'admission probe' }] };
const remaining = (response: ApiResponse, what: 'requests' | 'tokens') => Number(response.headers.get(`x-ratelimit-remaining-${what}`));

/** Waits for a fresh minute when fewer than `seconds` are left in this one, so a test's requests share one window. */
async function withinOneWindow(seconds: number): Promise<void> {
  const left = 60 - new Date().getUTCSeconds();
  if (left < seconds) await sleep(left * 1000 + 200);
}

describe('admission: epoch, rate limit and reservation in one script', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(suiteInfo().env.REDIS_URL);
  });

  afterAll(async () => {
    await redis?.quit();
  });

  it('a 402 counts nothing against the rate limit: neither the request nor its tokens', async () => {
    await withinOneWindow(15);
    const account = createAccount('free', '0');
    const before = await api('GET', '/v1/models', { key: account.masterKey });
    expect(before.status).toBe(200);
    const refused = await api('POST', '/v1/chat/completions', { key: account.masterKey, body: CHAT });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');
    // The 402 still reports the windows, as they stand: unchanged by the refused request.
    expect(remaining(refused, 'requests')).toBe(remaining(before, 'requests'));
    expect(remaining(refused, 'tokens')).toBe(remaining(before, 'tokens'));
    expect(refused.headers.get('retry-after')).toBeNull();
    const after = await api('GET', '/v1/models', { key: account.masterKey });
    expect(remaining(after, 'requests')).toBe(remaining(before, 'requests') - 1);
    expect(remaining(after, 'tokens')).toBe(remaining(before, 'tokens'));
  });

  it('an admitted request counts its request and its tokens once', async () => {
    await withinOneWindow(15);
    const account = createAccount('free', '5');
    const before = await api('GET', '/v1/models', { key: account.masterKey });
    const served = await api('POST', '/v1/chat/completions', { key: account.masterKey, body: CHAT });
    expect(served.status).toBe(200);
    expect(remaining(served, 'requests')).toBe(remaining(before, 'requests') - 1);
    const counted = remaining(before, 'tokens') - remaining(served, 'tokens');
    // The estimate: at least the prompt's real tokens plus the output cap.
    expect(counted).toBeGreaterThanOrEqual(served.body.usage.prompt_tokens + CHAT.max_tokens);
    const after = await api('GET', '/v1/models', { key: account.masterKey });
    expect(remaining(after, 'requests')).toBe(remaining(before, 'requests') - 2);
    expect(remaining(after, 'tokens')).toBe(remaining(served, 'tokens'));
  });

  it('a DevPass key uses no credits (an account with none is served) and is still rate-limited', async () => {
    await withinOneWindow(15);
    const account = createAccount('free', '0');
    const devKey = createDevPass(account.accountId);
    const body = { ...CHAT, model: 'sim-coder:dev' };
    const first = await api('POST', '/v1/chat/completions', { key: devKey, body });
    expect(first.status).toBe(200);
    const second = await api('POST', '/v1/chat/completions', { key: devKey, body });
    expect(second.status).toBe(200);
    expect(remaining(second, 'requests')).toBe(remaining(first, 'requests') - 1);
    expect(remaining(second, 'tokens')).toBeLessThan(remaining(first, 'tokens'));
  });

  it('a body refused after the reservation (validation) releases it before the answer: an immediate retry finds the credits', async () => {
    // sim-image costs 0.04 an image: the account can afford exactly one.
    const account = createAccount('enterprise', '0.04');
    const invalid = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: '' } });
    expect(invalid.status).toBe(400);
    const valid = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: 'a lighthouse at dusk' } });
    expect(valid.status).toBe(200);
    // The one image's reservation (then its charge) holds: a second cannot be afforded.
    const second = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: 'a lighthouse at dawn' } });
    expect(second.status).toBe(402);
  });

  it("a cached key whose account's epoch moved is authenticated again, on the metered and the unmetered path", async () => {
    const { edgeA } = suiteInfo();
    const owner = createAccount('enterprise', '100');
    const chatKey = (await createProxyKey(owner.masterKey)).key as string;
    const listKey = (await createProxyKey(owner.masterKey)).key as string;
    // Twice each: a key's first answer is not cached (its account is not known yet), the second is.
    for (const key of [chatKey, listKey, chatKey, listKey]) expect((await api('GET', '/v1/models', { key, base: edgeA })).status).toBe(200);
    // Disabled behind the API's back: no key-change event, no epoch bump.
    const db = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
    await db.connect();
    try {
      const hashes = [chatKey, listKey].map((key) => createHash('sha256').update(key).digest('hex'));
      await db.query('UPDATE api_keys SET is_active = false WHERE key_hash = ANY($1)', [hashes]);
    } finally {
      await db.end();
    }
    // The edge's cache still answers for them (the epoch has not moved)...
    expect((await api('POST', '/v1/chat/completions', { key: chatKey, base: edgeA, body: CHAT })).status).toBe(200);
    expect((await api('GET', '/v1/models', { key: listKey, base: edgeA })).status).toBe(200);
    // ...until it does: the request's script answers 'stale' and the edge asks key-service again.
    await redis.incr(`auth:epoch:{${owner.accountId}}`);
    const chat = await api('POST', '/v1/chat/completions', { key: chatKey, base: edgeA, body: CHAT });
    expect(chat.status).toBe(401);
    const list = await api('GET', '/v1/models', { key: listKey, base: edgeA });
    expect(list.status).toBe(401);
    // The master key of the same account was re-checked too and is still good.
    expect((await api('POST', '/v1/chat/completions', { key: owner.masterKey, base: edgeA, body: CHAT })).status).toBe(200);
  });

  it('revocation on one edge is a barrier on the other for a metered request cached there', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const owner = createAccount('enterprise', '100');
    const proxy = (await createProxyKey(owner.masterKey)).key as string;
    for (let i = 0; i < 2; i++) expect((await api('POST', '/v1/chat/completions', { key: proxy, base: edgeB, body: CHAT })).status).toBe(200);
    const off = await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, base: edgeA, body: { proxy_key: proxy } });
    expect(off.body?.status).toBe(false);
    const after = await api('POST', '/v1/chat/completions', { key: proxy, base: edgeB, body: CHAT });
    expect(after.status).toBe(401);
  });
});
