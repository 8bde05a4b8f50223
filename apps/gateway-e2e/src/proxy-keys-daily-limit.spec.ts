/**
 * The daily-limit rule: an `allocated_ammount` above the account's daily limit is refused with the
 * spec's detail, on create and on update, however large the amount (the suite runs with the default
 * PLAN_DAILY_LIMITS: free=10, pro=1000, enterprise=10000).
 */
import { api, createAccount, createProxyKey } from './support/api';

const detail = (limit: string) => ({ detail: `Allocated ammount cannot exceed your daily limit of ${limit}` });

describe.each([
  ['free', '10', 10.00000001],
  ['pro', '1000', 1000.00000001],
  ['enterprise', '10000', 10000.00000001],
])('proxy-key allocations on the %s plan (daily limit %s)', (plan, limit, justAbove) => {
  const amounts = [justAbove, 1e12, 1e21, 1e300];

  it("refuses every amount above the limit on create with the spec's detail, and accepts the limit itself", async () => {
    const owner = createAccount(plan, '1');
    for (const amount of amounts) {
      const response = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, body: { name: 'too much', allocated_ammount: amount } });
      expect({ amount, status: response.status, body: response.body }).toEqual({ amount, status: 400, body: detail(limit) });
    }
    const atLimit = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, body: { name: 'at the limit', allocated_ammount: Number(limit) } });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.allocated_ammount).toBe(Number(limit));
    expect((await api('GET', '/v1/auth/proxy', { key: owner.masterKey })).body).toHaveLength(1);
  });

  it("refuses every amount above the limit on update (body and legacy path forms), leaving the key's allocation as it was", async () => {
    const owner = createAccount(plan, '1');
    const key = await createProxyKey(owner.masterKey, { allocated_ammount: 1 });
    for (const amount of amounts) {
      const update = await api('POST', '/v1/auth/proxy/update', { key: owner.masterKey, body: { proxy_key: key.key, allocated_ammount: amount } });
      expect({ amount, status: update.status, body: update.body }).toEqual({ amount, status: 400, body: detail(limit) });
      const legacy = await api('POST', `/v1/auth/proxy/update/${key.key}`, { key: owner.masterKey, body: { allocated_ammount: amount } });
      expect({ amount, status: legacy.status, body: legacy.body }).toEqual({ amount, status: 400, body: detail(limit) });
    }
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: key.key } });
    expect(lookup.body.allocated_ammount).toBe(1);
    const atLimit = await api('POST', '/v1/auth/proxy/update', { key: owner.masterKey, body: { proxy_key: key.key, allocated_ammount: Number(limit) } });
    expect(atLimit.status).toBe(200);
  });
});

describe('proxy-key allocations: malformed amounts still fail validation', () => {
  it('names the field for a negative amount or one with 9 decimals', async () => {
    const owner = createAccount('pro', '1');
    for (const amount of [-1, 0.123456789]) {
      const response = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, body: { name: 'bad', allocated_ammount: amount } });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain('allocated_ammount');
    }
  });
});
