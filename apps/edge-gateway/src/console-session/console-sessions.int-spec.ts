/**
 * The console's session store against the real Redis (see tools/jest/integration-setup.ts): what it
 * keeps, and the idle and absolute expiries that end a session whatever the browser does.
 */
import { RedisConnection } from '@gateway/platform';
import { ConsoleSessions } from './console-sessions';

const KEY = 'ek-proxy-abcdefghijklmnopqrstuvwxyz0123456789';

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what} never happened`);
}

describe('console sessions in Redis', () => {
  const redis = new RedisConnection({ mode: 'standalone', url: 'redis://127.0.0.1:6379/11' });
  const sessions = (idle: number, max: number) => new ConsoleSessions(redis, { CONSOLE_SESSION_IDLE_SECONDS: idle, CONSOLE_SESSION_MAX_SECONDS: max });

  afterAll(() => redis.onApplicationShutdown());

  it('keeps neither the key nor the token in Redis, and needs both the token and its CSRF token', async () => {
    const store = sessions(60, 600);
    const { token, view } = await store.create(KEY, 'proxy');
    expect(view).toMatchObject({ key_type: 'proxy', key: 'ek-proxy-...6789', idle_expires_in: 60 });
    const keys = await redis.client.keys('console:*');
    const values = await Promise.all(keys.filter((key) => key.startsWith('console:session:')).map((key) => redis.client.get(key)));
    for (const text of [...keys, ...values]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(KEY.slice(9));
    }
    expect(await store.resolve(token, view.csrf_token)).toMatchObject({ key: KEY });
    expect(await store.resolve(token, 'wrong')).toBe('csrf');
    expect(await store.resolve(token, undefined)).toBe('csrf');
    // A token one character off finds nothing (and unseals nothing).
    const other = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(await store.resolve(other, view.csrf_token)).toBeNull();
    expect(await store.describe(token)).toEqual(view);
  });

  it('ends a session left idle, while one in use lives on', async () => {
    const store = sessions(1, 600);
    const idle = await store.create(KEY, 'proxy');
    const busy = await store.create(KEY, 'proxy');
    const started = Date.now();
    // Used every 200 ms, the busy one outlives the idle one's second by far.
    await until(async () => {
      expect(await store.resolve(busy.token, busy.view.csrf_token)).not.toBeNull();
      return Date.now() - started > 1500;
    }, 'a second and a half of use');
    expect(await store.resolve(idle.token, idle.view.csrf_token)).toBeNull();
    expect(await store.resolve(busy.token, busy.view.csrf_token)).toMatchObject({ key: KEY });
  });

  it('ends a session at its absolute expiry however busy, and ends every session of a key at once', async () => {
    const store = sessions(60, 1);
    const { token, view } = await store.create(KEY, 'proxy');
    expect(view.expires_at).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    await until(async () => (await store.resolve(token, view.csrf_token)) === null, 'the absolute expiry');

    const longLived = sessions(60, 600);
    const first = await longLived.create(KEY, 'proxy');
    const second = await longLived.create(KEY, 'proxy');
    const resolved = await longLived.resolve(first.token, first.view.csrf_token);
    if (!resolved || resolved === 'csrf') throw new Error('no session');
    await longLived.endKey(resolved.keyHash);
    expect(await longLived.resolve(first.token, first.view.csrf_token)).toBeNull();
    expect(await longLived.resolve(second.token, second.view.csrf_token)).toBeNull();
  });
});
