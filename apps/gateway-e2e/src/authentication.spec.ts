import { api, createAccount, createDevPass, createProxyKey, nowSeconds, sleep, TestAccount, UNSPENT_BUDGETS } from './support/api';
import { suiteInfo } from './support/suite-info';

const validate = (key: string, body: unknown = {}, options: { base?: string; headers?: Record<string, string> } = {}) =>
  api('POST', '/v1/auth/proxy/validate', { key, body, ...options });

describe('authentication', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '100');
  });

  it('refuses a request without a key, or with an unknown key, with 401 and {detail}', async () => {
    const missing = await api('GET', '/v1/auth/proxy');
    expect(missing.status).toBe(401);
    expect(missing.body.detail).toMatch(/Missing API key/);
    const unknown = await api('GET', '/v1/auth/proxy', { key: 'ek-thisisnotakeyatallthisisnotakeyatall0000' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ detail: 'Invalid API key' });
    const garbage = await api('GET', '/v1/auth/proxy', { headers: { authorization: 'Basic abc' } });
    expect(garbage.status).toBe(401);
  });

  it('keeps administration to the master key: proxy and DevPass keys get 403', async () => {
    const proxy = await createProxyKey(owner.masterKey);
    const devKey = createDevPass(owner.accountId);
    expect(devKey).toMatch(/^ek-dev-[A-Za-z0-9_-]{32,}$/);
    for (const key of [proxy.key, devKey]) {
      const list = await api('GET', '/v1/auth/proxy', { key });
      expect(list.status).toBe(403);
      expect(list.body.detail).toMatch(/requires a master key/);
      const create = await api('POST', '/v1/auth/proxy/create', { key, body: { name: 'x', allocated_ammount: 1 } });
      expect(create.status).toBe(403);
      const regen = await api('GET', '/v1/auth/key/regen', { key });
      expect(regen.status).toBe(403);
      const removeAll = await api('DELETE', '/v1/auth/proxy/delete', { key });
      expect(removeAll.status).toBe(403);
    }
    expect((await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } })).status).toBe(200);
  });

  describe('validate', () => {
    it('grants access to an active key within its whitelists', async () => {
      const proxy = await createProxyKey(owner.masterKey, { model_whitelist: ['model-a'] });
      const response = await validate(proxy.key, { model: 'model-a' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ valid: true, message: 'Access granted', budgets: UNSPENT_BUDGETS });
      expect((await validate(proxy.key)).body).toEqual({ valid: true, message: 'Access granted', budgets: UNSPENT_BUDGETS });
    });

    it("reports a model outside the whitelist as Model '<model>' not in whitelist", async () => {
      const proxy = await createProxyKey(owner.masterKey, { model_whitelist: ['model-a'] });
      const response = await validate(proxy.key, { model: 'model-b' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ valid: false, message: "Model 'model-b' not in whitelist", budgets: UNSPENT_BUDGETS });
    });

    it('reports expiry as "Proxy key has expired"', async () => {
      const expiresAt = nowSeconds() + 4;
      const proxy = await createProxyKey(owner.masterKey, { expires_at: expiresAt });
      expect((await validate(proxy.key)).body.valid).toBe(true);
      // Past the expiry second, however long the calls above took.
      await sleep(Math.max(0, (expiresAt + 1) * 1000 - Date.now()) + 100);
      const response = await validate(proxy.key);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ valid: false, message: 'Proxy key has expired', budgets: UNSPENT_BUDGETS });
      const record = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } });
      expect(record.body.is_active).toBe(true);
    });

    it('reports a disabled key as "Proxy key is inactive"', async () => {
      const proxy = await createProxyKey(owner.masterKey);
      await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: proxy.key } });
      expect((await validate(proxy.key)).body).toEqual({ valid: false, message: 'Proxy key is inactive', budgets: UNSPENT_BUDGETS });
    });

    it('answers 401 for an unknown or removed key, and 403 for a master key', async () => {
      const proxy = await createProxyKey(owner.masterKey);
      await api('POST', '/v1/auth/proxy/remove', { key: owner.masterKey, body: { proxy_key: proxy.key } });
      const removed = await validate(proxy.key);
      expect(removed.status).toBe(401);
      expect(removed.body).toEqual({ detail: 'Invalid API key' });
      const master = await validate(owner.masterKey);
      expect(master.status).toBe(403);
    });
  });

  describe('IP allowlist', () => {
    it('matches an IPv4 CIDR block against the loopback caller', async () => {
      const inside = await createProxyKey(owner.masterKey, { ip_whitelist: ['127.0.0.0/8'] });
      const outside = await createProxyKey(owner.masterKey, { ip_whitelist: ['10.0.0.0/8'] });
      expect((await validate(inside.key)).body).toEqual({ valid: true, message: 'Access granted', budgets: UNSPENT_BUDGETS });
      expect((await validate(outside.key)).body).toEqual({ valid: false, message: 'IP address not in whitelist', budgets: UNSPENT_BUDGETS });
    });

    it('matches IPv6 addresses and blocks when the caller connects over IPv6', async () => {
      const v6 = `http://[::1]:${suiteInfo().edgeAPort}`;
      const exact = await createProxyKey(owner.masterKey, { ip_whitelist: ['::1'] });
      const block = await createProxyKey(owner.masterKey, { ip_whitelist: ['::/127'] });
      const v4only = await createProxyKey(owner.masterKey, { ip_whitelist: ['127.0.0.1'] });
      expect((await validate(exact.key, {}, { base: v6 })).body.valid).toBe(true);
      expect((await validate(block.key, {}, { base: v6 })).body.valid).toBe(true);
      expect((await validate(v4only.key, {}, { base: v6 })).body).toEqual({ valid: false, message: 'IP address not in whitelist', budgets: UNSPENT_BUDGETS });
      expect((await validate(exact.key)).body.valid).toBe(false);
    });

    it('believes X-Forwarded-For only from a trusted proxy', async () => {
      const { edgeA, edgeB } = suiteInfo();
      const v4 = await createProxyKey(owner.masterKey, { ip_whitelist: ['203.0.113.0/24'] });
      const v6 = await createProxyKey(owner.masterKey, { ip_whitelist: ['2001:db8::/32'] });
      const forwardedV4 = { 'x-forwarded-for': '203.0.113.7' };
      const forwardedV6 = { 'x-forwarded-for': '2001:db8::42' };
      // edge B trusts loopback as a proxy; edge A trusts nobody and sees the socket address.
      expect((await validate(v4.key, {}, { base: edgeB, headers: forwardedV4 })).body.valid).toBe(true);
      expect((await validate(v6.key, {}, { base: edgeB, headers: forwardedV6 })).body.valid).toBe(true);
      expect((await validate(v4.key, {}, { base: edgeB, headers: { 'x-forwarded-for': '198.51.100.1' } })).body.valid).toBe(false);
      expect((await validate(v4.key, {}, { base: edgeA, headers: forwardedV4 })).body).toEqual({
        valid: false,
        message: 'IP address not in whitelist',
        budgets: UNSPENT_BUDGETS,
      });
    });
  });

  it('records last_used once a key has been used (batched)', async () => {
    const proxy = await createProxyKey(owner.masterKey);
    expect(proxy.last_used).toBeNull();
    const before = nowSeconds();
    await validate(proxy.key);
    let lastUsed: number | null = null;
    for (let i = 0; i < 150 && lastUsed === null; i++) {
      await sleep(100);
      const record = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } });
      lastUsed = record.body.last_used;
    }
    expect(lastUsed).not.toBeNull();
    expect(lastUsed as number).toBeGreaterThanOrEqual(before - 1);
  });

  it('regenerates the primary key: the old one fails at once, the new one works, proxy keys are unaffected', async () => {
    const account = createAccount('standard', '5');
    const proxy = await createProxyKey(account.masterKey);
    const regen = await api('GET', '/v1/auth/key/regen', { key: account.masterKey });
    expect(regen.status).toBe(200);
    expect(regen.body).toEqual({ key: expect.stringMatching(/^ek-[A-Za-z0-9_-]{32,}$/) });
    expect(regen.body.key).not.toBe(account.masterKey);
    expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey })).status).toBe(401);
    const list = await api('GET', '/v1/auth/proxy', { key: regen.body.key });
    expect(list.status).toBe(200);
    expect(list.body.map((record: { key: string }) => record.key)).toEqual([proxy.key]);
    expect((await validate(proxy.key)).body.valid).toBe(true);
  });
});
