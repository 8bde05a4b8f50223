/**
 * Console sessions: a key exchanged once for an HttpOnly cookie, every `/v1` route reachable with
 * it and its CSRF token, nothing of the key given back, and the session ended by logout, by the
 * key's regeneration and by switching a proxy key off or removing it — on every edge replica.
 */
import { api, ApiResponse, createAccount, createProxyKey, ledgerEntry, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';

interface Session {
  cookie: string;
  csrf: string;
  body: Record<string, unknown>;
  response: ApiResponse;
}

async function signIn(key: string, base?: string): Promise<Session> {
  const response = await api('POST', '/console/api/session', { body: { key }, base });
  if (response.status !== 201) throw new Error(`sign-in answered ${response.status}: ${response.text}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0], csrf: response.body.csrf_token, body: response.body, response };
}

/** A call made the way the console makes it: the cookie and the CSRF header, no key. */
const withSession = (session: Session, method: string, path: string, options: { body?: unknown; base?: string; csrf?: string | null } = {}) =>
  api(method, path, {
    body: options.body,
    base: options.base,
    headers: { cookie: session.cookie, ...(options.csrf === null ? {} : { 'x-csrf-token': options.csrf ?? session.csrf }) },
  });

const chat = (session: Session, model = 'sim-chat') =>
  withSession(session, 'POST', '/v1/chat/completions', { body: { model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 } });

describe('console sessions', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '100');
  });

  it('signs in with a key: an HttpOnly, SameSite=Strict cookie, and an answer that holds no key', async () => {
    const session = await signIn(owner.masterKey);
    const setCookie = session.response.headers.get('set-cookie') ?? '';
    const attributes = setCookie
      .split(';')
      .slice(1)
      .map((part) => part.trim().toLowerCase());
    expect(setCookie).toMatch(/^gateway_console=[A-Za-z0-9_-]{43};/);
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    // Plain HTTP here: a Secure cookie would never come back.
    expect(attributes).not.toContain('secure');
    expect(attributes.some((part) => part.startsWith('max-age') || part.startsWith('expires'))).toBe(false);
    expect(session.body).toEqual({
      key_type: 'master',
      key: `ek-...${owner.masterKey.slice(-4)}`,
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      expires_at: expect.any(Number),
      idle_expires_in: 1800,
    });
    expect(session.body.expires_at).toBeGreaterThan(Date.now() / 1000 + 43_000);
    // Not the key, not even in the cookie: the token is random.
    for (const text of [session.response.text, setCookie]) expect(text).not.toContain(owner.masterKey.slice(3));

    const described = await api('GET', '/console/api/session', { headers: { cookie: session.cookie } });
    expect(described.status).toBe(200);
    expect(described.body).toEqual(session.body);
    expect(described.text).not.toContain(owner.masterKey.slice(3));
  });

  it('answers every /v1 route to the session as to its key, on every edge replica', async () => {
    const session = await signIn(owner.masterKey);
    for (const base of [suiteInfo().edgeA, suiteInfo().edgeB]) {
      const me = await withSession(session, 'GET', '/v1/user/me', { base });
      expect(me.status).toBe(200);
      expect(me.body.subscription).toBe('pro');
    }
    // A metered call through the session is billed like any other.
    const answer = await chat(session);
    expect(answer.status).toBe(200);
    const entry = await ledgerEntry(owner.masterKey, answer.headers.get('x-request-id')!);
    expect(entry).toMatchObject({ status: 'success', model: 'sim-chat', key: `ek-...${owner.masterKey.slice(-4)}` });
    expect(Number(entry.credits)).toBeGreaterThan(0);
  });

  it('refuses a call without the CSRF token, or with another session’s, and a sign-in from another origin', async () => {
    const session = await signIn(owner.masterKey);
    const other = await signIn(owner.masterKey);
    for (const csrf of [null, '', 'x'.repeat(32), other.csrf]) {
      for (const [method, path] of [
        ['GET', '/v1/user/me'],
        ['POST', '/v1/auth/proxy/create'],
      ]) {
        const response = await withSession(session, method, path, { csrf, body: method === 'POST' ? { name: 'csrf', allocated_ammount: 1 } : undefined });
        expect({ csrf, path, status: response.status }).toEqual({ csrf, path, status: 403 });
        expect(response.text).toContain('x-csrf-token');
      }
    }
    // Nothing was created by the refused calls.
    const keys = await api('GET', '/v1/auth/proxy', { key: owner.masterKey });
    expect(keys.body.filter((key: { name: string }) => key.name === 'csrf')).toEqual([]);

    const foreign = await api('POST', '/console/api/session', { body: { key: owner.masterKey }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('set-cookie')).toBeNull();
    const signOut = await withSession(session, 'DELETE', '/console/api/session', { csrf: null });
    expect(signOut.status).toBe(403);
    expect((await withSession(session, 'GET', '/v1/user/me')).status).toBe(200);
  });

  it('refuses bad sign-ins with the reason, and sets no cookie', async () => {
    for (const [body, status, text] of [
      [{ key: 'ek-not-a-key-0000000000000000000000' }, 401, 'Invalid API key'],
      [{}, 400, 'key'],
      [{ key: 42 }, 400, 'key'],
    ] as const) {
      const response = await api('POST', '/console/api/session', { body });
      expect({ body, status: response.status }).toEqual({ body, status });
      expect(response.text).toContain(text);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    const unknown = await api('GET', '/v1/user/me', {
      headers: { cookie: 'gateway_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'x-csrf-token': 'x' },
    });
    expect(unknown.status).toBe(401);
  });

  it('gives a proxy key’s session only its own data and no master action', async () => {
    const mine = await createProxyKey(owner.masterKey, { name: 'mine', allocated_ammount: 5 });
    const theirs = await createProxyKey(owner.masterKey, { name: 'theirs', allocated_ammount: 5 });
    const session = await signIn(mine.key);
    expect(session.body).toMatchObject({ key_type: 'proxy', key: `ek-proxy-...${mine.key.slice(-4)}` });
    const used = await chat(session);
    expect(used.status).toBe(200);
    await ledgerEntry(mine.key, used.headers.get('x-request-id')!);
    const theirsUsed = await api('POST', '/v1/chat/completions', {
      key: theirs.key,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 },
    });
    await ledgerEntry(theirs.key, theirsUsed.headers.get('x-request-id')!);

    const logs = await withSession(session, 'GET', '/v1/user/logs');
    expect(logs.status).toBe(200);
    expect(logs.body.length).toBeGreaterThan(0);
    expect(new Set(logs.body.map((entry: { key: string }) => entry.key))).toEqual(new Set([`ek-proxy-...${mine.key.slice(-4)}`]));
    const view = await withSession(session, 'GET', '/v1/key');
    expect(view.body).toMatchObject({ type: 'proxy', name: 'mine' });
    expect(view.text).not.toContain(mine.key.slice(9));
    for (const [method, path, body] of [
      ['GET', '/v1/auth/proxy', undefined],
      ['POST', '/v1/auth/proxy/lookup', { proxy_key: theirs.key }],
      ['POST', '/v1/auth/proxy/toggle', { proxy_key: theirs.key }],
      ['DELETE', '/v1/auth/proxy/delete', undefined],
      ['GET', '/v1/auth/key/regen', undefined],
    ] as const) {
      const response = await withSession(session, method, path, { body });
      expect({ path, status: response.status }).toEqual({ path, status: 403 });
    }
    // The other key is untouched.
    expect((await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: theirs.key } })).body.is_active).toBe(true);
  });

  it('ends a proxy key’s sessions when it is switched off, for good, and when it is removed', async () => {
    const key = await createProxyKey(owner.masterKey, { name: 'switched', allocated_ammount: 5 });
    const onA = await signIn(key.key);
    const onB = await signIn(key.key, suiteInfo().edgeB);
    for (const session of [onA, onB]) expect((await withSession(session, 'GET', '/v1/key')).status).toBe(200);

    const off = await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: key.key } });
    expect(off.body.status).toBe(false);
    const on = await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, body: { proxy_key: key.key }, base: suiteInfo().edgeB });
    expect(on.body.status).toBe(true);
    // Switched back on, the key works again, but its sessions stay ended (on both replicas).
    for (const [session, base] of [
      [onA, suiteInfo().edgeB],
      [onB, suiteInfo().edgeA],
    ] as const) {
      const response = await withSession(session, 'GET', '/v1/key', { base });
      expect(response.status).toBe(401);
      expect(response.text).toContain('sign in again');
    }
    expect((await api('GET', '/v1/key', { key: key.key })).status).toBe(200);

    const again = await signIn(key.key);
    await api('POST', '/v1/auth/proxy/remove', { key: owner.masterKey, body: { proxy_key: key.key } });
    expect((await withSession(again, 'GET', '/v1/key')).status).toBe(401);
  });

  it('follows the master key it regenerates, and ends the old key’s other sessions', async () => {
    const account = createAccount('pro', '10');
    const regenerating = await signIn(account.masterKey);
    const bystander = await signIn(account.masterKey, suiteInfo().edgeB);
    const regen = await withSession(regenerating, 'GET', '/v1/auth/key/regen');
    expect(regen.status).toBe(200);
    const newKey: string = regen.body.key;
    expect(newKey).not.toBe(account.masterKey);

    expect((await api('GET', '/v1/user/me', { key: account.masterKey })).status).toBe(401);
    expect((await api('GET', '/v1/user/me', { key: newKey })).status).toBe(200);
    const followed = await withSession(regenerating, 'GET', '/v1/user/me', { base: suiteInfo().edgeB });
    expect(followed.status).toBe(200);
    const described = await api('GET', '/console/api/session', { headers: { cookie: regenerating.cookie } });
    expect(described.body.key).toBe(`ek-...${newKey.slice(-4)}`);
    expect((await withSession(bystander, 'GET', '/v1/user/me')).status).toBe(401);

    // Regenerated with the key itself, the console's sessions end too.
    const next = await api('GET', '/v1/auth/key/regen', { key: newKey });
    expect(next.status).toBe(200);
    expect((await withSession(regenerating, 'GET', '/v1/user/me')).status).toBe(401);
  });

  it('signs out: the session ends on the server and the cookie is cleared', async () => {
    const session = await signIn(owner.masterKey);
    const out = await withSession(session, 'DELETE', '/console/api/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^gateway_console=;.*Max-Age=0/i);
    // The old cookie, replayed, is worth nothing.
    expect((await withSession(session, 'GET', '/v1/user/me')).status).toBe(401);
    expect((await api('GET', '/console/api/session', { headers: { cookie: session.cookie } })).status).toBe(401);
  });
});
