import { api, createAccount, createProxyKey, nowSeconds, TestAccount } from './support/api';

describe('proxy key administration', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '100');
  });

  it('creates a key: 201 with the record the spec lists, without user_id and enabled_thinking', async () => {
    const before = nowSeconds();
    const response = await api('POST', '/v1/auth/proxy/create', {
      key: owner.masterKey,
      body: {
        name: 'ci runner',
        expires_at: -1,
        allocated_ammount: 12.5,
        model_whitelist: ['gpt-4o-mini'],
        ip_whitelist: ['10.0.0.0/8', '2001:db8::/32'],
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/\S/),
      name: 'ci runner',
      key: expect.stringMatching(/^ek-proxy-[A-Za-z0-9_-]{32,}$/),
      expires_at: -1,
      allocated_ammount: 12.5,
      used_ammount: 0,
      spend_window: null,
      is_active: true,
      model_whitelist: ['gpt-4o-mini'],
      ip_whitelist: ['10.0.0.0/8', '2001:db8::/32'],
      created_at: expect.any(Number),
      last_used: null,
      // The allocation as a budget (no windows were given): where it stands, as GET /v1/key shows it.
      budgets: [{ period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 12.5, used: 0, remaining: 12.5, resets_at: null }],
    });
    expect(response.body.created_at).toBeGreaterThanOrEqual(before);
    expect(response.body).not.toHaveProperty('user_id');
    expect(response.body).not.toHaveProperty('enabled_thinking');
  });

  it("lists the caller's keys with their values, and looks one up with owner and thinking flag", async () => {
    const created = await createProxyKey(owner.masterKey, { name: 'listed' });
    const list = await api('GET', '/v1/auth/proxy', { key: owner.masterKey });
    expect(list.status).toBe(200);
    const listed = list.body.find((record: { key: string }) => record.key === created.key);
    expect(listed).toEqual(created);

    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({ ...created, user_id: owner.accountId, enabled_thinking: false });
  });

  it('updates fields, including the spend window, and reports "Proxy key updated"', async () => {
    const created = await createProxyKey(owner.masterKey);
    const expiresAt = nowSeconds() + 3600;
    const update = await api('POST', '/v1/auth/proxy/update', {
      key: owner.masterKey,
      body: {
        proxy_key: created.key,
        name: 'renamed',
        expires_at: expiresAt,
        allocated_ammount: 3,
        spend_window: 'weekly',
        model_whitelist: ['a', 'b'],
        ip_whitelist: ['192.168.1.1'],
      },
    });
    expect(update.status).toBe(200);
    expect(update.body).toEqual({ message: 'Proxy key updated' });
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(lookup.body).toMatchObject({
      name: 'renamed',
      expires_at: expiresAt,
      allocated_ammount: 3,
      spend_window: 'weekly',
      model_whitelist: ['a', 'b'],
      ip_whitelist: ['192.168.1.1'],
    });

    const cleared = await api('POST', '/v1/auth/proxy/update', {
      key: owner.masterKey,
      body: { proxy_key: created.key, spend_window: null, expires_at: -1 },
    });
    expect(cleared.status).toBe(200);
    const after = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(after.body).toMatchObject({ spend_window: null, expires_at: -1, name: 'renamed' });
  });

  it("refuses an allocation above the daily limit with the spec's detail", async () => {
    const created = await createProxyKey(owner.masterKey);
    const update = await api('POST', '/v1/auth/proxy/update', {
      key: owner.masterKey,
      body: { proxy_key: created.key, allocated_ammount: 1000.01 },
    });
    expect(update.status).toBe(400);
    expect(update.body).toEqual({ detail: 'Allocated ammount cannot exceed your daily limit of 1000' });
    const create = await api('POST', '/v1/auth/proxy/create', {
      key: owner.masterKey,
      body: { name: 'too much', allocated_ammount: 5000 },
    });
    expect(create.status).toBe(400);
    expect(create.body).toEqual({ detail: 'Allocated ammount cannot exceed your daily limit of 1000' });
  });

  it('toggles a key off and on, each taking effect for the very next request', async () => {
    const created = await createProxyKey(owner.masterKey);
    // Cached by the edge as active.
    expect((await api('GET', '/v1/models', { key: created.key })).status).toBe(200);
    const off = await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ message: 'Proxy key status updated', status: false });
    expect((await api('GET', '/v1/models', { key: created.key })).status).toBe(401);
    const on = await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(on.body).toEqual({ message: 'Proxy key status updated', status: true });
    expect((await api('GET', '/v1/models', { key: created.key })).status).toBe(200);
  });

  it('removes a key for good; removing it again is "Proxy key not found" (404)', async () => {
    const created = await createProxyKey(owner.masterKey);
    const removed = await api('POST', '/v1/auth/proxy/remove', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ message: 'Proxy key deleted' });
    expect((await api('GET', '/v1/models', { key: created.key })).status).toBe(401);
    const again = await api('POST', '/v1/auth/proxy/remove', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: 'Proxy key not found' });
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: created.key } });
    expect(lookup.status).toBe(404);
  });

  it("deletes every proxy key of the account and none of another's", async () => {
    const account = createAccount('basic', '10');
    const other = createAccount('basic', '10');
    await createProxyKey(account.masterKey);
    await createProxyKey(account.masterKey);
    const kept = await createProxyKey(other.masterKey);
    const response = await api('DELETE', '/v1/auth/proxy/delete', { key: account.masterKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'Proxy keys deleted' });
    expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey })).body).toEqual([]);
    const remaining = await api('GET', '/v1/auth/proxy', { key: other.masterKey });
    expect(remaining.body.map((record: { key: string }) => record.key)).toEqual([kept.key]);
  });

  describe('legacy forms', () => {
    it('POST /auth/proxy/toggle/{proxy_key}', async () => {
      const created = await createProxyKey(owner.masterKey);
      const response = await api('POST', `/v1/auth/proxy/toggle/${created.key}`, { key: owner.masterKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ message: 'Proxy key status updated', status: false });
    });

    it('POST /auth/proxy/update/{proxy_key}', async () => {
      const created = await createProxyKey(owner.masterKey);
      const response = await api('POST', `/v1/auth/proxy/update/${created.key}`, {
        key: owner.masterKey,
        body: { name: 'legacy rename' },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ message: 'Proxy key updated' });
      const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: created.key } });
      expect(lookup.body.name).toBe('legacy rename');
    });

    it('DELETE /auth/proxy/delete/{proxy_key} deletes that key only', async () => {
      const account = createAccount('basic', '10');
      const gone = await createProxyKey(account.masterKey);
      const kept = await createProxyKey(account.masterKey);
      const response = await api('DELETE', `/v1/auth/proxy/delete/${gone.key}`, { key: account.masterKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ message: 'Proxy key deleted' });
      const list = await api('GET', '/v1/auth/proxy', { key: account.masterKey });
      expect(list.body.map((record: { key: string }) => record.key)).toEqual([kept.key]);
    });

    it('GET /auth/proxy/{proxy_key} and GET /auth/proxy/?proxy_key= look one key up; GET /auth/proxy lists', async () => {
      const created = await createProxyKey(owner.masterKey);
      const expected = { ...created, user_id: owner.accountId, enabled_thinking: false };
      const byPath = await api('GET', `/v1/auth/proxy/${created.key}`, { key: owner.masterKey });
      expect(byPath.status).toBe(200);
      expect(byPath.body).toEqual(expected);
      const byQuery = await api('GET', `/v1/auth/proxy/?proxy_key=${encodeURIComponent(created.key)}`, { key: owner.masterKey });
      expect(byQuery.status).toBe(200);
      expect(byQuery.body).toEqual(expected);
      const list = await api('GET', '/v1/auth/proxy', { key: owner.masterKey });
      expect(Array.isArray(list.body)).toBe(true);
      const missing = await api('GET', '/v1/auth/proxy/', { key: owner.masterKey });
      expect(missing.status).toBe(400);
      expect(missing.body.detail).toMatch(/proxy_key/);
    });
  });

  describe('plan caps', () => {
    it('a free account holds at most 10 proxy keys, even when created concurrently', async () => {
      const account = createAccount('free', '1');
      const results = await Promise.all(
        Array.from({ length: 14 }, (_, i) => api('POST', '/v1/auth/proxy/create', { key: account.masterKey, body: { name: `k${i}`, allocated_ammount: 1 } })),
      );
      const statuses = results.map((result) => result.status).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(10);
      const refused = results.filter((result) => result.status !== 201);
      expect(refused).toHaveLength(4);
      for (const response of refused) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual({ detail: 'Proxy key limit reached: the free plan allows 10 proxy keys' });
      }
      expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey })).body).toHaveLength(10);
    });

    it('a basic account holds 15', async () => {
      const account = createAccount('basic', '1');
      for (let i = 0; i < 15; i++) await createProxyKey(account.masterKey, { allocated_ammount: 1 });
      const sixteenth = await api('POST', '/v1/auth/proxy/create', {
        key: account.masterKey,
        body: { name: 'one more', allocated_ammount: 1 },
      });
      expect(sixteenth.status).toBe(403);
      expect(sixteenth.body.detail).toBe('Proxy key limit reached: the basic plan allows 15 proxy keys');
    });
  });

  describe('cross-account isolation', () => {
    it("account B cannot look up, update, toggle or remove A's keys: 404 as if they did not exist", async () => {
      const a = createAccount('pro', '10');
      const b = createAccount('pro', '10');
      const key = await createProxyKey(a.masterKey);
      const attempts = [
        api('POST', '/v1/auth/proxy/lookup', { key: b.masterKey, body: { proxy_key: key.key } }),
        api('POST', '/v1/auth/proxy/update', { key: b.masterKey, body: { proxy_key: key.key, name: 'stolen' } }),
        api('POST', '/v1/auth/proxy/toggle', { key: b.masterKey, body: { proxy_key: key.key } }),
        api('POST', '/v1/auth/proxy/remove', { key: b.masterKey, body: { proxy_key: key.key } }),
        api('GET', `/v1/auth/proxy/${key.key}`, { key: b.masterKey }),
        api('POST', `/v1/auth/proxy/toggle/${key.key}`, { key: b.masterKey }),
        api('POST', `/v1/auth/proxy/update/${key.key}`, { key: b.masterKey, body: { name: 'stolen' } }),
        api('DELETE', `/v1/auth/proxy/delete/${key.key}`, { key: b.masterKey }),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ detail: 'Proxy key not found' });
      }
      await api('DELETE', '/v1/auth/proxy/delete', { key: b.masterKey });
      const untouched = await api('POST', '/v1/auth/proxy/lookup', { key: a.masterKey, body: { proxy_key: key.key } });
      expect(untouched.status).toBe(200);
      expect(untouched.body).toMatchObject({ name: key.name, is_active: true });
      expect((await api('GET', '/v1/auth/proxy', { key: b.masterKey })).body).toEqual([]);
    });
  });
});
