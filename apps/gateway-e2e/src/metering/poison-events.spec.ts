/**
 * No usage event can stall billing (issue 18, item 1). 1,100 usage events PostgreSQL cannot store
 * (a NUL or a lone surrogate in the model, the route, the key id, the provider ...) published
 * straight into JetStream, as a buggy or hostile publisher would, used to fill the metering
 * consumer's unacknowledged window (1000) for good: from then on no account was billed. Now they
 * are set aside in the USAGE_DEAD stream at once, normal requests are recorded within seconds, and
 * the admin CLI lists the dead letters and replays one (sanitized) into the ledger.
 */
import { type UsageRecordedEvent, UsageStream } from '@gateway/contracts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { api, createAccount, ledgerEntry, nowSeconds, TestAccount } from '../support/api';
import { StoredKey, storedKey } from '../support/keys-db';
import { suiteInfo } from '../support/suite-info';

const POISON_EVENTS = 1_100;
const codec = JSONCodec<UsageRecordedEvent>();

/** The operators' CLI, as `npm run admin -- …` runs it, with the suite's environment. */
function admin(args: string[]): any {
  const entry = join(suiteInfo().root, 'dist/apps/key-service/src/cli/admin.cli.js');
  const output = execFileSync(process.execPath, [entry, ...args, '--json'], { env: suiteInfo().env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(output.trim().split('\n').pop() as string);
}

describe('metering: poison usage events', () => {
  let nats: NatsConnection;
  let owner: TestAccount;
  let master: StoredKey;

  beforeAll(async () => {
    nats = await connect({ servers: suiteInfo().env.NATS_URL.split(',') });
    owner = createAccount('pro', '100');
    master = await storedKey(owner.masterKey);
  });

  afterAll(async () => {
    await nats?.close();
  });

  // Every text field that reaches the ledger, or rides along, poisoned in turn.
  const poisons: Partial<UsageRecordedEvent>[] = [
    { model: 'a\u0000b' },
    { model: '\ud800' },
    { route: 'chat.completions\u0000' },
    { keyId: `${'k'}\u0000` },
    { maskedKey: 'ek-…\udc00' },
    { ip: '127.0.0.1\u0000' },
    { provider: 'openai\u0000' },
    { upstreamRoute: 'sim-chat/\ud83d' },
    { clientRequestId: 'client\u0000' },
  ];
  const poisonEvent = (index: number): UsageRecordedEvent => ({
    requestId: `req_${randomUUID().replace(/-/g, '')}`,
    accountId: master.accountId,
    keyId: master.id,
    keyType: 'master',
    maskedKey: master.maskedKey,
    model: 'sim-chat',
    route: 'chat.completions',
    inputTokens: 10,
    outputTokens: 20,
    status: 'success',
    ip: '127.0.0.1',
    timestamp: nowSeconds(),
    ...poisons[index % poisons.length],
  });

  it('1,100 poison events and poison requests: normal requests are still recorded within 5 s, and the admin CLI lists and replays the dead letters', async () => {
    const events = Array.from({ length: POISON_EVENTS }, (_, index) => poisonEvent(index));
    const js = nats.jetstream();
    for (let start = 0; start < events.length; start += 200) {
      await Promise.all(
        events.slice(start, start + 200).map((event) => js.publish(UsageStream.recordedSubject, codec.encode(event), { msgID: event.requestId })),
      );
    }

    // The same poison through the edge: refused (400) or not found (404), never a 5xx.
    const poisonRequests = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        api('POST', '/v1/chat/completions', { key: owner.masterKey, body: { model: 'a\u0000b', messages: [{ role: 'user', content: 'hi' }] } }),
      ),
      ...Array.from({ length: 5 }, () => api('POST', '/v1/responses', { key: owner.masterKey, body: { model: '\ud800', input: 'hi' } })),
      ...Array.from({ length: 5 }, () => api('POST', '/v1/embeddings', { key: owner.masterKey, body: { model: 'a\u0000b', input: 'hi' } })),
    ]);
    for (const response of poisonRequests) expect({ status: response.status, poison5xx: response.status >= 500 }).toMatchObject({ poison5xx: false });

    // Normal requests right after: each in the ledger within 5 s.
    const normal = await Promise.all(
      Array.from({ length: 10 }, () =>
        api('POST', '/v1/chat/completions', { key: owner.masterKey, body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello!' }] } }),
      ),
    );
    const answeredAt = Date.now();
    for (const response of normal) expect(response.status).toBe(200);
    const entries = await Promise.all(
      normal.map((response) => ledgerEntry(owner.masterKey, response.headers.get('x-request-id') as string, { timeoutMs: 5_000 })),
    );
    expect(Date.now() - answeredAt).toBeLessThan(5_000);
    expect(entries.map((entry) => entry.status)).toEqual(normal.map(() => 'success'));

    // Every poison event is set aside, with its reason, and listed by the admin CLI.
    const ids = new Set(events.map((event) => event.requestId));
    let listed: any[] = [];
    const deadline = Date.now() + 10_000;
    while ((listed = admin(['usage', 'dead-letters']).filter((letter: any) => ids.has(letter.request_id))).length < POISON_EVENTS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(listed).toHaveLength(POISON_EVENTS);
    for (const letter of listed) {
      expect(letter).toMatchObject({ account_id: master.accountId, reason: 'unstorable_text', deliveries: 1 });
      expect(typeof letter.usage_sequence).toBe('number');
      expect(Number.isNaN(Date.parse(letter.dead_lettered_at))).toBe(false);
    }
    const byField = new Set(listed.map((letter) => letter.code));
    expect([...byField].sort()).toEqual(['clientRequestId', 'ip', 'keyId', 'maskedKey', 'model', 'provider', 'route', 'upstreamRoute'].sort());

    // Replayed with the offending text escaped (as it is it would only be set aside again): billed
    // exactly once, and gone from the dead letters.
    const replayed = events[0];
    expect(admin(['usage', 'replay', replayed.requestId, '--sanitize'])).toEqual([
      expect.objectContaining({ request_id: replayed.requestId, result: 'recorded', sanitized: true }),
    ]);
    const entry = await ledgerEntry(owner.masterKey, replayed.requestId);
    expect(entry.model).toBe('a\uFFFDb');
    expect(admin(['usage', 'replay', replayed.requestId])).toEqual([expect.objectContaining({ request_id: replayed.requestId, result: 'not_found' })]);
  });
});
