import { api, createAccount, createProxyKey } from './support/api';
import { suiteInfo } from './support/suite-info';

/**
 * Two edge replicas cache authentications for 300 s in this suite, so a key refused by the other
 * replica right after a change proves the key-change event reached it.
 */
describe('key changes reach every edge replica', () => {
  const validate = (key: string, base: string) => api('POST', '/v1/auth/proxy/validate', { key, body: {}, base });

  it('regenerate through A: B refuses the old master key on its next request', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey, base: edgeB })).status).toBe(200);
    const regen = await api('GET', '/v1/auth/key/regen', { key: account.masterKey, base: edgeA });
    expect(regen.status).toBe(200);
    const old = await api('GET', '/v1/auth/proxy', { key: account.masterKey, base: edgeB });
    expect(old.status).toBe(401);
    expect((await api('GET', '/v1/auth/proxy', { key: regen.body.key, base: edgeB })).status).toBe(200);
  });

  it('toggle through A: B sees the key inactive on its next request', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).body).toEqual({ valid: true, message: 'Access granted' });
    await api('POST', '/v1/auth/proxy/toggle', { key: account.masterKey, body: { proxy_key: proxy.key }, base: edgeA });
    expect((await validate(proxy.key, edgeB)).body).toEqual({ valid: false, message: 'Proxy key is inactive' });
  });

  it('remove through A: B refuses the key on its next request', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).status).toBe(200);
    await api('POST', '/v1/auth/proxy/remove', { key: account.masterKey, body: { proxy_key: proxy.key }, base: edgeA });
    expect((await validate(proxy.key, edgeB)).status).toBe(401);
  });

  it('update through A: B applies the new whitelist on its next request', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey);
    expect((await validate(proxy.key, edgeB)).body.valid).toBe(true);
    await api('POST', '/v1/auth/proxy/update', {
      key: account.masterKey,
      body: { proxy_key: proxy.key, ip_whitelist: ['192.0.2.0/24'] },
      base: edgeA,
    });
    expect((await validate(proxy.key, edgeB)).body).toEqual({ valid: false, message: 'IP address not in whitelist' });
  });

  it('delete all through B: A refuses every key of the account', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const account = createAccount('pro', '10');
    const first = await createProxyKey(account.masterKey);
    const second = await createProxyKey(account.masterKey);
    expect((await validate(first.key, edgeA)).status).toBe(200);
    expect((await validate(second.key, edgeA)).status).toBe(200);
    await api('DELETE', '/v1/auth/proxy/delete', { key: account.masterKey, base: edgeB });
    expect((await validate(first.key, edgeA)).status).toBe(401);
    expect((await validate(second.key, edgeA)).status).toBe(401);
  });
});
