import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { KeysChangedEvent, Subjects } from '@gateway/contracts';
import { PrismaService } from '@gateway/db';
import { parseEnv } from '@gateway/platform';
import { connect, JSONCodec, NatsConnection, Subscription } from 'nats';
import { randomBytes } from 'node:crypto';
import { AccountsService } from './accounts/accounts.service';
import { KeyServiceModule } from './app.module';
import { KeyServiceEnv } from './config/key-service.env';
import { hashKey } from './crypto/key-crypto.service';
import { KeysService } from './keys/keys.service';
import { ProxyKeysService } from './proxy-keys/proxy-keys.service';

/** key-service's own logic against real PostgreSQL and NATS. */
describe('key-service (integration)', () => {
  let app: INestApplicationContext;
  let accounts: AccountsService;
  let proxyKeys: ProxyKeysService;
  let keys: KeysService;
  let nats: NatsConnection;
  let events: Subscription;
  const received: KeysChangedEvent[] = [];

  beforeAll(async () => {
    const env = parseEnv(KeyServiceEnv, {
      DATABASE_URL: process.env.INTEGRATION_DATABASE_URL,
      NATS_URL: process.env.NATS_URL,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
    app = await NestFactory.createApplicationContext(KeyServiceModule.forRoot(env, { withTransports: false }), { logger: false });
    accounts = app.get(AccountsService);
    proxyKeys = app.get(ProxyKeysService);
    keys = app.get(KeysService);
    nats = await connect({ servers: env.NATS_URL });
    // The wire carries the contract's JSON itself (no envelope).
    const codec = JSONCodec<KeysChangedEvent>();
    events = nats.subscribe(Subjects.keysChanged);
    void (async () => {
      for await (const message of events) received.push(codec.decode(message.data));
    })();
  });

  afterAll(async () => {
    await nats.drain();
    await app.close();
  });

  const waitForEvent = async (predicate: (event: KeysChangedEvent) => boolean): Promise<KeysChangedEvent> => {
    for (let i = 0; i < 50; i++) {
      const found = received.find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no matching keys.changed event');
  };

  it('holds the plan cap exactly under 25 concurrent creations', async () => {
    const { account } = await accounts.create('free', '1');
    const results = await Promise.allSettled(
      Array.from({ length: 25 }, (_, i) => proxyKeys.create({ accountId: account.id, name: `k${i}`, allocated_ammount: 1 })),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
    expect(await proxyKeys.list(account.id)).toHaveLength(10);
  });

  it('never loses a toggle: 20 concurrent toggles leave the key as it started', async () => {
    const { account } = await accounts.create('pro', '1');
    const created = await proxyKeys.create({ accountId: account.id, name: 'flip', allocated_ammount: 1 });
    await Promise.all(Array.from({ length: 20 }, () => proxyKeys.toggle({ accountId: account.id, proxy_key: created.key })));
    expect((await proxyKeys.lookup({ accountId: account.id, proxy_key: created.key })).is_active).toBe(true);
  });

  it('publishes keys.changed with the old key hash on regeneration, and authenticates only the new key', async () => {
    const { account, masterKey } = await accounts.create('standard', '3');
    const { key } = await keys.regenerateMasterKey(account.id);
    const event = await waitForEvent((candidate) => candidate.accountId === account.id);
    expect(event).toEqual({ accountId: account.id, keyHashes: [hashKey(masterKey)], reason: 'master_regenerated' });
    expect(await keys.authenticate(hashKey(masterKey))).toBeNull();
    expect(await keys.authenticate(hashKey(key))).toMatchObject({ accountId: account.id, keyType: 'master', plan: 'standard' });
  });

  it('stores proxy keys hashed and encrypted, never in plain text', async () => {
    const { account } = await accounts.create('pro', '1');
    const created = await proxyKeys.create({ accountId: account.id, name: 'sealed', allocated_ammount: 1 });
    const prisma = app.get(PrismaService);
    const rows = await prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM api_keys WHERE account_id = ${account.id}`;
    const proxyRow = rows.find((row) => row.type === 'proxy')!;
    expect(proxyRow.key_hash).toBe(hashKey(created.key));
    expect(JSON.stringify(rows)).not.toContain(created.key.slice('ek-proxy-'.length));
    expect(proxyRow.masked_key).toBe(`ek-proxy-...${created.key.slice(-4)}`);
  });

  it('bootstraps idempotently: credits kept, plan applied, configured keys installed', async () => {
    const master = `ek-${randomBytes(32).toString('base64url')}`;
    const first = await accounts.ensureBootstrap({ plan: 'pro', credits: '100', masterKey: master });
    if (first.created) {
      expect(first.masterKey).toBe(master);
      expect(first.devKey).toMatch(/^ek-dev-/);
    }
    await accounts.credit(first.accountId, '-40');
    const second = await accounts.ensureBootstrap({ plan: 'enterprise', credits: '100', masterKey: master });
    expect(second).toEqual({ accountId: first.accountId, created: false });
    const account = (await accounts.list()).find((candidate) => candidate.id === first.accountId)!;
    expect(account.plan).toBe('enterprise');
    expect(account.credits.toString()).toBe(first.created ? '60' : account.credits.toString());
    expect(await keys.authenticate(hashKey(master))).toMatchObject({ accountId: first.accountId });
  });
});
