/**
 * Metering writes the usage events it has at hand as one batch. Seen from outside: a usage event
 * delivered twice (published again without a message id) is charged once, and an event the ledger
 * cannot store (a poison message) is set aside on its own without holding back the events around it
 * (poison-events.spec.ts: 1,100 of them, and the dead-letter stream).
 */
import { type UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { api, createAccount, ledgerEntry, nowSeconds, TestAccount } from '../support/api';
import { StoredKey, storedKey } from '../support/keys-db';
import { valueOf } from '../support/prometheus';
import { suiteInfo } from '../support/suite-info';

// sim-chat in config/models.yaml: output 1.5 credits per million tokens.
const codec = JSONCodec<UsageRecordedEvent>();
const newRequestId = () => `req_${randomUUID().replace(/-/g, '')}`;

describe('metering: batches', () => {
  let nats: NatsConnection;
  let owner: TestAccount;
  let master: StoredKey;

  const event = (fields: Partial<UsageRecordedEvent> = {}): UsageRecordedEvent => ({
    requestId: newRequestId(),
    accountId: master.accountId,
    keyId: master.id,
    keyType: master.type as UsageRecordedEvent['keyType'],
    maskedKey: master.maskedKey,
    model: 'sim-chat',
    route: 'chat.completions',
    inputTokens: 0,
    outputTokens: 1_000_000,
    status: 'success',
    ip: '127.0.0.1',
    timestamp: nowSeconds(),
    ...fields,
  });
  // Without a message id JetStream stores every copy: metering sees each delivery.
  const publish = (usage: UsageRecordedEvent) => nats.jetstream().publish(UsageStream.recordedSubject, codec.encode(usage));
  const me = async () => (await api('GET', '/v1/user/me', { key: owner.masterKey })).body;
  const meteringMetrics = async () => (await fetch(`http://127.0.0.1:${suiteInfo().services['metering-service'].healthPort}/metrics`)).text();

  beforeAll(async () => {
    nats = await connect({ servers: suiteInfo().env.NATS_URL.split(',') });
    owner = createAccount('pro', '100');
    master = await storedKey(owner.masterKey);
  });

  afterAll(async () => {
    await nats.close();
  });

  it('charges a request delivered several times, in one burst and again later, exactly once', async () => {
    const duplicatesBefore = valueOf(await meteringMetrics(), 'gateway_ledger_writes_total', { result: 'duplicate' });
    const events = Array.from({ length: 10 }, () => event());
    // Each event three times in one burst (most land in the same batch), then the burst again.
    await Promise.all([...events, ...events, ...events].map(publish));
    for (const usage of events) expect((await ledgerEntry(owner.masterKey, usage.requestId)).credits).toBe(1.5);
    await Promise.all(events.map(publish));
    // Wait until metering has seen every copy: 20 in the burst and 10 later.
    const deadline = Date.now() + 15_000;
    while (valueOf(await meteringMetrics(), 'gateway_ledger_writes_total', { result: 'duplicate' }) < duplicatesBefore + 30 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(valueOf(await meteringMetrics(), 'gateway_ledger_writes_total', { result: 'duplicate' })).toBeGreaterThanOrEqual(duplicatesBefore + 30);
    const body = await me();
    expect(body.credits).toBe(85);
    expect(body.endpoints['chat.completions']).toBe(10);
    const logs = await api('GET', '/v1/user/logs?limit=500', { key: owner.masterKey });
    expect(logs.body).toHaveLength(10);
  });

  it('a poison event is set aside on its own: the events around it are recorded', async () => {
    const deadBefore = valueOf(await meteringMetrics(), 'gateway_usage_events_dead_lettered_total', { reason: 'invalid_event' });
    // 2^31 input tokens do not fit the ledger's integer column: it can never be recorded.
    const poison = event({ inputTokens: 2 ** 31, outputTokens: 0 });
    const good = Array.from({ length: 20 }, () => event({ outputTokens: 2_000_000 }));
    await Promise.all([...good.slice(0, 10), poison, ...good.slice(10)].map(publish));
    for (const usage of good) expect((await ledgerEntry(owner.masterKey, usage.requestId)).credits).toBe(3);
    const deadline = Date.now() + 10_000;
    while (valueOf(await meteringMetrics(), 'gateway_usage_events_dead_lettered_total', { reason: 'invalid_event' }) === deadBefore && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(valueOf(await meteringMetrics(), 'gateway_usage_events_dead_lettered_total', { reason: 'invalid_event' })).toBe(deadBefore + 1);
    const logs = await api('GET', `/v1/user/logs?request_id=${poison.requestId}`, { key: owner.masterKey });
    expect(logs.body).toEqual([]);
  });
});
