/**
 * Prompt-cache pricing in the ledger: usage events that report cache reads and writes, published on
 * JetStream as the router publishes them, are priced at the catalog's `cache_read` / `cache_write`
 * (the rest of the input at `input`), exactly, and `/v1/user/logs` shows the cache tokens.
 */
import { type UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { api, createAccount, createDevPass, createProxyKey, ledgerEntry, nowSeconds, TestAccount } from '../support/api';
import { StoredKey, storedKey } from '../support/keys-db';
import { suiteInfo } from '../support/suite-info';

// sim-chat in config/models.yaml: { input: 0.5, output: 1.5, cache_read: 0.05, cache_write: 0.625 }.
const codec = JSONCodec<UsageRecordedEvent>();
const newRequestId = () => `req_${randomUUID().replace(/-/g, '')}`;

const credits = async (key: string): Promise<number> => (await api('GET', '/v1/user/me', { key })).body.credits;

describe('metering: prompt-cache tokens priced and logged exactly', () => {
  let nats: NatsConnection;
  let owner: TestAccount;
  let master: StoredKey;

  const publish = async (key: StoredKey, fields: Partial<UsageRecordedEvent>): Promise<string> => {
    const requestId = newRequestId();
    const event: UsageRecordedEvent = {
      requestId,
      accountId: key.accountId,
      keyId: key.id,
      keyType: key.type as UsageRecordedEvent['keyType'],
      maskedKey: key.maskedKey,
      model: 'sim-chat',
      route: 'messages',
      inputTokens: 0,
      outputTokens: 0,
      status: 'success',
      ip: '127.0.0.1',
      timestamp: nowSeconds(),
      ...fields,
    };
    await nats.jetstream().publish(UsageStream.recordedSubject, codec.encode(event), { msgID: requestId });
    return requestId;
  };

  beforeAll(async () => {
    nats = await connect({ servers: suiteInfo().env.NATS_URL.split(',') });
    owner = createAccount('pro', '100');
    master = await storedKey(owner.masterKey);
  });

  afterAll(async () => {
    await nats.close();
  });

  it('charges uncached input at input, cache reads at cache_read, cache writes at cache_write, output at output', async () => {
    // 2000 uncached × 0.5 + 6000 read × 0.05 + 2000 written × 0.625 + 1000 out × 1.5 = 4050 per million.
    const requestId = await publish(master, { inputTokens: 10_000, cacheReadTokens: 6_000, cacheWriteTokens: 2_000, outputTokens: 1_000 });
    expect(await ledgerEntry(owner.masterKey, requestId)).toEqual({
      request_id: requestId,
      key: master.maskedKey,
      key_id: expect.any(String),
      model: 'sim-chat',
      route: 'messages',
      credits: 0.00405,
      timestamp: expect.any(Number),
      status: 'success',
      ip: '127.0.0.1',
      input_tokens: 10_000,
      output_tokens: 1_000,
      cache_read_input_tokens: 6_000,
      cache_creation_input_tokens: 2_000,
    });
    expect(await credits(owner.masterKey)).toBe(99.99595);

    // Where floats drift (7 × 0.05 / 1e6 is 3.5000000000000004e-7 in binary floats), the ledger does not.
    const tiny = await publish(master, { inputTokens: 7, cacheReadTokens: 7 });
    expect(await ledgerEntry(owner.masterKey, tiny)).toMatchObject({
      credits: 3.5e-7,
      input_tokens: 7,
      cache_read_input_tokens: 7,
      cache_creation_input_tokens: 0,
    });
    expect(await credits(owner.masterKey)).toBe(99.99594965);
  });

  it('prices an event without cache tokens at the input price and logs zero cache tokens', async () => {
    const requestId = await publish(master, { route: 'chat.completions', inputTokens: 1_000, outputTokens: 100 });
    expect(await ledgerEntry(owner.masterKey, requestId)).toMatchObject({
      credits: 0.00065,
      input_tokens: 1_000,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it("adds the exact cache-aware charge to a proxy key's spend, and charges DevPass usage nothing while logging its cache tokens", async () => {
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey, { allocated_ammount: 5 });
    const proxyKey = await storedKey(proxy.key);
    const charged = await publish(proxyKey, { inputTokens: 3_000, cacheReadTokens: 1_000, cacheWriteTokens: 1_000, outputTokens: 0 });
    // 1000 × 0.5 + 1000 × 0.05 + 1000 × 0.625 = 1175 per million.
    expect(await ledgerEntry(proxy.key, charged)).toMatchObject({ credits: 0.001175, cache_read_input_tokens: 1_000, cache_creation_input_tokens: 1_000 });
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: account.masterKey, body: { proxy_key: proxy.key } });
    expect(lookup.body.used_ammount).toBe(0.001175);

    const devKey = createDevPass(account.accountId);
    const dev = await storedKey(devKey);
    const free = await publish(dev, { model: 'sim-coder:dev', inputTokens: 500, cacheReadTokens: 400, outputTokens: 10 });
    expect(await ledgerEntry(devKey, free)).toMatchObject({ credits: 0, input_tokens: 500, cache_read_input_tokens: 400, cache_creation_input_tokens: 0 });
    expect(await credits(account.masterKey)).toBe(9.998825);
  });
});
