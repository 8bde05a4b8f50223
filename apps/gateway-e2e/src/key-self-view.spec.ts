/** `GET /v1/key`: every key holder sees its own key and what it has left, and nothing of any other key; validate shows the same budgets. */
import { api, ApiResponse, createAccount, createDevPass, createProxyKey, ledgerEntry, nowSeconds, sleep, TestAccount } from './support/api';

const DAY_MS = 86_400_000;

const ownKey = (key: string, path = '/v1/key') => api('GET', path, { key });

const chat = (key: string, content: string) =>
  api('POST', '/v1/chat/completions', { key, body: { model: 'sim-chat', messages: [{ role: 'user', content }], max_tokens: 40 } });

const requestIdOf = (response: ApiResponse): string => {
  const id = response.headers.get('x-request-id');
  if (!id) throw new Error('no x-request-id');
  return id;
};

/** Where each window ends (UTC), computed here on its own terms rather than by the gateway's code. */
const nextReset: Record<'daily' | 'weekly' | 'monthly', (ms: number) => number> = {
  daily: (ms) => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), new Date(ms).getUTCDate() + 1) / 1000,
  // Weeks start on Monday: from a Monday the next one is 7 days on, from a Sunday 1.
  weekly: (ms) => {
    const at = new Date(ms);
    const daysToMonday = (8 - at.getUTCDay()) % 7 || 7;
    return (Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) + daysToMonday * DAY_MS) / 1000;
  },
  monthly: (ms) => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth() + 1, 1) / 1000,
};

/** The answer, read between two instants, resets where the window around either instant ends (a test run may cross midnight). */
async function viewWithin(key: string): Promise<{ response: ApiResponse; before: number; after: number }> {
  const before = Date.now();
  const response = await ownKey(key);
  return { response, before, after: Date.now() };
}

describe('GET /v1/key: the calling key and what it has left', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('standard', '50');
  });

  it('shows master and DevPass keys themselves: the plan, no name, and no switch, expiry, whitelist or budget of their own', async () => {
    const devKey = createDevPass(owner.accountId);
    for (const [type, key, maskedKey] of [
      ['master', owner.masterKey, `ek-...${owner.masterKey.slice(-4)}`],
      // DevPass usage is never charged: the account's credits are in /v1/user/me.
      ['devpass', devKey, `ek-dev-...${devKey.slice(-4)}`],
    ]) {
      const response = await ownKey(key);
      expect({ type, status: response.status, body: response.body }).toEqual({
        type,
        status: 200,
        body: {
          type,
          name: null,
          masked_key: maskedKey,
          plan: 'standard',
          is_active: true,
          expires_at: -1,
          model_whitelist: [],
          ip_whitelist: [],
          // DevPass keys: the standard plan's token windows (DEVPASS_TOKEN_WINDOWS defaults), nothing used yet.
          budgets:
            type === 'master'
              ? []
              : [
                  { period: '5h', timezone: 'UTC', unit: 'tokens', amount: 2_500_000, used: 0, remaining: 2_500_000, resets_at: null },
                  { period: 'weekly', timezone: 'UTC', unit: 'tokens', amount: 12_500_000, used: 0, remaining: 12_500_000, resets_at: expect.any(Number) },
                ],
        },
      });
    }
  });

  it('shows a proxy key its record and one budget: its allocation over its spend window', async () => {
    const expiresAt = nowSeconds() + 3600;
    const proxy = await createProxyKey(owner.masterKey, {
      name: 'nightly build',
      allocated_ammount: 2.5,
      spend_window: 'daily',
      expires_at: expiresAt,
      model_whitelist: ['sim-chat'],
      ip_whitelist: ['127.0.0.0/8', '::1'],
    });
    const { response, before, after } = await viewWithin(proxy.key);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      type: 'proxy',
      name: 'nightly build',
      masked_key: `ek-proxy-...${proxy.key.slice(-4)}`,
      plan: 'standard',
      is_active: true,
      expires_at: expiresAt,
      model_whitelist: ['sim-chat'],
      ip_whitelist: ['127.0.0.0/8', '::1'],
      budgets: [{ period: 'daily', timezone: 'UTC', unit: 'credits', amount: 2.5, used: 0, remaining: 2.5, resets_at: expect.any(Number) }],
    });
    expect([nextReset.daily(before), nextReset.daily(after)]).toContain(response.body.budgets[0].resets_at);
  });

  it('resets weekly budgets on the next Monday and monthly ones on the next 1st (UTC); a lifetime budget never', async () => {
    for (const window of ['weekly', 'monthly'] as const) {
      const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 1, spend_window: window });
      const { response, before, after } = await viewWithin(proxy.key);
      expect(response.body.budgets).toEqual([
        { period: window, timezone: 'UTC', unit: 'credits', amount: 1, used: 0, remaining: 1, resets_at: expect.any(Number) },
      ]);
      expect([nextReset[window](before), nextReset[window](after)]).toContain(response.body.budgets[0].resets_at);
    }
    const lifetime = await createProxyKey(owner.masterKey, { allocated_ammount: 3 });
    expect((await ownKey(lifetime.key)).body.budgets).toEqual([
      { period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 3, used: 0, remaining: 3, resets_at: null },
    ]);
  });

  it("counts in `used` what the ledger charged the key in its window, and only the key's own charges", async () => {
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 2, spend_window: 'daily' });
    const charged: string[] = [];
    for (const prompt of ['first question for the budget', 'a second, somewhat longer question for the budget']) {
      const response = await chat(proxy.key, prompt);
      expect(response.status).toBe(200);
      charged.push(requestIdOf(response));
    }
    // The account's own spend is not the proxy key's.
    const other = await chat(owner.masterKey, 'spent by the master key');
    expect(other.status).toBe(200);
    await ledgerEntry(owner.masterKey, requestIdOf(other));
    const entries = await Promise.all(charged.map((id) => ledgerEntry(proxy.key, id)));
    const ledgerSum = entries.reduce((sum, entry) => sum + entry.credits, 0);
    expect(ledgerSum).toBeGreaterThan(0);

    const view = await ownKey(proxy.key);
    expect(view.status).toBe(200);
    const [budget] = view.body.budgets;
    expect(budget).toMatchObject({ period: 'daily', timezone: 'UTC', unit: 'credits', amount: 2 });
    // Each entry's credits are exact to 12 decimal places; their sum as floats, nearly so.
    expect(budget.used).toBeCloseTo(ledgerSum, 12);
    expect(budget.remaining).toBeCloseTo(2 - budget.used, 12);
    // The same figure as the owner's lookup shows, to the last digit.
    const record = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } });
    expect(budget.used).toBe(record.body.used_ammount);
  });

  it('shows each proxy key only itself, whatever the request names', async () => {
    const first = await createProxyKey(owner.masterKey, { name: 'first', allocated_ammount: 1, spend_window: 'daily' });
    const second = await createProxyKey(owner.masterKey, { name: 'second', allocated_ammount: 4, spend_window: 'monthly' });
    const spent = await chat(first.key, 'only the first key spends');
    expect(spent.status).toBe(200);
    await ledgerEntry(first.key, requestIdOf(spent));

    const firstView = await ownKey(first.key);
    const secondView = await ownKey(second.key);
    expect(firstView.body).toMatchObject({ name: 'first', masked_key: `ek-proxy-...${first.key.slice(-4)}` });
    expect(firstView.body.budgets[0].used).toBeGreaterThan(0);
    expect(secondView.body).toMatchObject({ name: 'second', masked_key: `ek-proxy-...${second.key.slice(-4)}` });
    expect(secondView.body.budgets).toEqual([expect.objectContaining({ period: 'monthly', amount: 4, used: 0, remaining: 4 })]);
    // Parameters are not read: naming another key shows the caller's own.
    const naming = await ownKey(first.key, `/v1/key?proxy_key=${encodeURIComponent(second.key)}`);
    expect(naming.status).toBe(200);
    expect(naming.body).toEqual(firstView.body);
  });

  it('answers a disabled, an expired, or an out-of-allowlist proxy key with its state, where other routes refuse it', async () => {
    const disabled = await createProxyKey(owner.masterKey, { name: 'switched off' });
    await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: disabled.key } });
    expect((await api('GET', '/v1/models', { key: disabled.key })).status).toBe(401);
    const off = await ownKey(disabled.key);
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ type: 'proxy', name: 'switched off', is_active: false });

    const outside = await createProxyKey(owner.masterKey, { ip_whitelist: ['192.0.2.0/24'] });
    expect((await api('GET', '/v1/models', { key: outside.key })).status).toBe(403);
    expect((await ownKey(outside.key)).body).toMatchObject({ is_active: true, ip_whitelist: ['192.0.2.0/24'] });

    const expiresAt = nowSeconds() + 2;
    const expiring = await createProxyKey(owner.masterKey, { expires_at: expiresAt });
    // Past the expiry second, however long the calls above took.
    await sleep(Math.max(0, (expiresAt + 1) * 1000 - Date.now()) + 100);
    expect((await api('GET', '/v1/models', { key: expiring.key })).status).toBe(401);
    const expired = await ownKey(expiring.key);
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ is_active: true, expires_at: expiresAt });
  });

  it("refuses a missing, unknown or deleted key with 401 in OpenAI's error shape", async () => {
    const missing = await api('GET', '/v1/key');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      error: { message: expect.stringMatching(/^Missing API key/), type: expect.any(String), code: expect.any(String), param: null },
    });
    const unknown = await ownKey('ek-thisisnotakeyatallthisisnotakeyatall0000');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toMatchObject({ message: 'Invalid API key' });

    const proxy = await createProxyKey(owner.masterKey);
    expect((await ownKey(proxy.key)).status).toBe(200);
    await api('POST', '/v1/auth/proxy/remove', { key: owner.masterKey, body: { proxy_key: proxy.key } });
    const removed = await ownKey(proxy.key);
    expect(removed.status).toBe(401);
    expect(removed.body).toEqual(unknown.body);
  });

  it('puts the same budgets in the validate answer, beside its unchanged verdict', async () => {
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 1.5, spend_window: 'weekly' });
    const spent = await chat(proxy.key, 'spend a little before validating');
    expect(spent.status).toBe(200);
    await ledgerEntry(proxy.key, requestIdOf(spent));
    const view = await ownKey(proxy.key);
    expect(view.body.budgets[0].used).toBeGreaterThan(0);

    const granted = await api('POST', '/v1/auth/proxy/validate', { key: proxy.key, body: { model: 'sim-chat' } });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ valid: true, message: 'Access granted', budgets: view.body.budgets });

    await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: proxy.key } });
    const refused = await api('POST', '/v1/auth/proxy/validate', { key: proxy.key, body: {} });
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ valid: false, message: 'Proxy key is inactive', budgets: view.body.budgets });
  });

  it('serves GET (and HEAD) only: another method is the 404 of a route the gateway does not have', async () => {
    const head = await api('HEAD', '/v1/key', { key: owner.masterKey });
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: '' });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await api(method, '/v1/key', { key: owner.masterKey, body: {} });
      expect({ method, status: response.status, body: response.body }).toEqual({
        method,
        status: 404,
        body: { error: { message: expect.any(String), type: 'not_found_error', code: 'not_found', param: null } },
      });
    }
  });
});
