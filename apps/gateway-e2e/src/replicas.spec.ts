import { api, ApiResponse, createAccount, createProxyKey, sleep, UNSPENT_BUDGETS } from './support/api';
import { suiteInfo } from './support/suite-info';

/**
 * Two edge replicas cache authentications for 300 s in this suite, so a key refused by the other
 * replica soon after a change (long before that TTL) proves the key-change event reached it. The
 * event is pub/sub: the other replica sees it within moments, not before the change is answered.
 */
describe('key changes reach every edge replica', () => {
  const validate = (key: string, base: string) => api('POST', '/v1/auth/proxy/validate', { key, body: {}, base });

  /** Repeats `call` until `seen` holds (up to 5 s), and returns the last response. */
  async function eventually(call: () => Promise<ApiResponse>, seen: (response: ApiResponse) => boolean): Promise<ApiResponse> {
    let response = await call();
    for (let i = 0; i < 50 && !seen(response); i++) {
      await sleep(100);
      response = await call();
    }
    return response;
  }

  it('regenerate through A: B refuses the old master key moments later', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey, base: edgeB })).status).toBe(200);
    const regen = await api('GET', '/v1/auth/key/regen', { key: account.masterKey, base: edgeA });
    expect(regen.status).toBe(200);
    const old = await eventually(
      () => api('GET', '/v1/auth/proxy', { key: account.masterKey, base: edgeB }),
      (r) => r.status !== 200,
    );
    expect(old.status).toBe(401);
    expect((await api('GET', '/v1/auth/proxy', { key: regen.body.key, base: edgeB })).status).toBe(200);
  });

  it('toggle through A: B sees the key inactive moments later', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).body).toEqual({ valid: true, message: 'Access granted', budgets: UNSPENT_BUDGETS });
    await api('POST', '/v1/auth/proxy/toggle', { key: account.masterKey, body: { proxy_key: proxy.key }, base: edgeA });
    expect(
      (
        await eventually(
          () => validate(proxy.key, edgeB),
          (r) => !r.body.valid,
        )
      ).body,
    ).toEqual({ valid: false, message: 'Proxy key is inactive', budgets: UNSPENT_BUDGETS });
  });

  it('remove through A: B refuses the key moments later', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).status).toBe(200);
    await api('POST', '/v1/auth/proxy/remove', { key: account.masterKey, body: { proxy_key: proxy.key }, base: edgeA });
    expect(
      (
        await eventually(
          () => validate(proxy.key, edgeB),
          (r) => r.status !== 200,
        )
      ).status,
    ).toBe(401);
  });

  it('update through A: B applies the new whitelist moments later', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).body.valid).toBe(true);
    await api('POST', '/v1/auth/proxy/update', {
      key: account.masterKey,
      body: { proxy_key: proxy.key, ip_whitelist: ['192.0.2.0/24'] },
      base: edgeA,
    });
    expect(
      (
        await eventually(
          () => validate(proxy.key, edgeB),
          (r) => !r.body.valid,
        )
      ).body,
    ).toEqual({ valid: false, message: 'IP address not in whitelist', budgets: UNSPENT_BUDGETS });
  });

  it('delete all through B: A refuses every key of the account', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const first = await createProxyKey(account.masterKey);
    const second = await createProxyKey(account.masterKey);
    expect((await validate(first.key, edgeA)).status).toBe(200);
    expect((await validate(second.key, edgeA)).status).toBe(200);
    await api('DELETE', '/v1/auth/proxy/delete', { key: account.masterKey, base: edgeB });
    expect(
      (
        await eventually(
          () => validate(first.key, edgeA),
          (r) => r.status !== 200,
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await eventually(
          () => validate(second.key, edgeA),
          (r) => r.status !== 200,
        )
      ).status,
    ).toBe(401);
  });
});
