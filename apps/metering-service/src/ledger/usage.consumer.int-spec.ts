/**
 * The usage consumer against real PostgreSQL and a NATS server of the test's own: no event can
 * stall metering. Events that can never be recorded (not JSON, invalid, text PostgreSQL cannot
 * store, data PostgreSQL refuses) are set aside in the USAGE_DEAD stream at once with their reason,
 * one that keeps failing for another reason after METERING_MAX_DELIVERIES deliveries; the good
 * events of the same batches are written. A PostgreSQL outage sets nothing aside and spends no
 * delivery; once it is back every event is written once. A dead letter replayed (sanitized) is
 * recorded and charged exactly once. An event is charged once in exact decimals however often it
 * is delivered, and settles the edge's reservation in Redis to the exact nano-credit.
 */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type INestApplicationContext } from '@nestjs/common';
import { type UsageDeadLetter, UsageDeadStream, type UsageRecordedEvent, UsageStream, usageVoid } from '@gateway/contracts';
import { BudgetStore, toNano } from '@gateway/billing';
import { Prisma, PrismaService } from '@gateway/db';
import { createJsonLogger, JsonLoggerService, ObservabilityModule, GatewayMetrics, UsageDeadLetters } from '@gateway/platform';
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Redis from 'ioredis';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { parse, stringify } from 'yaml';
import { MeteringServiceModule } from '../app.module';
import { MeteringEnv } from '../metering.env';

// Tooling shared with `npm start`: plain JS outside any project.
/* eslint-disable @nx/enforce-module-boundaries */
const { natsServerBinary, waitForPort } = require('../../../../tools/scripts/lib/infra');
const { freePort } = require('../../../../tools/scripts/lib/suite');
/* eslint-enable @nx/enforce-module-boundaries */

const ROOT = join(__dirname, '../../../..');
const REDIS_URL = `redis://127.0.0.1:6379/${process.env.TEST_REDIS_DB ?? '13'}`;
const MAX_DELIVERIES = 3;
const codec = JSONCodec<UsageRecordedEvent>();
const newId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;
const D = (value: string | number) => new Prisma.Decimal(value);

/** Polls `check` until it returns true, or fails after `timeoutMs` with `what`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A TCP proxy to PostgreSQL the test cuts: `close()` drops every connection and refuses new ones. */
class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private server?: Server;

  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  async close(): Promise<void> {
    const closed = this.server ? once(this.server, 'close') : Promise.resolve();
    this.server?.close();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

describe('UsageConsumer (integration): the money path and dead letters', () => {
  let natsServer: ChildProcess;
  let natsStore: string;
  let catalogDir: string;
  let nats: NatsConnection;
  let prisma: PrismaService;
  let proxy: CuttableProxy;
  let app: INestApplicationContext;
  const logLines: string[] = [];

  beforeAll(async () => {
    const binary = natsServerBinary();
    if (!binary) throw new Error('nats-server is not installed (npm run infra installs it)');
    const natsPort = await freePort();
    natsStore = mkdtempSync(join(tmpdir(), 'metering-int-nats-'));
    natsServer = spawn(binary, ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', natsStore], { stdio: 'ignore' });
    if (!(await waitForPort('127.0.0.1', natsPort, 10))) throw new Error('the test NATS server did not start');
    nats = await connect({ servers: `nats://127.0.0.1:${natsPort}` });

    const databaseUrl = new URL(process.env.INTEGRATION_DATABASE_URL as string);
    prisma = new PrismaService(databaseUrl.toString());
    await prisma.$connect();
    // An event the ledger refuses for a reason that is neither its data nor an outage (a bug, say):
    // PL/pgSQL's raise_exception (SQLSTATE P0001) for one model name.
    await prisma.$executeRawUnsafe(`
      CREATE OR REPLACE FUNCTION int_refuse_model() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.model = 'int-always-refused' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF; RETURN NEW; END $$`);
    await prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS int_refuse_model ON usage_logs`);
    await prisma.$executeRawUnsafe(`CREATE TRIGGER int_refuse_model BEFORE INSERT ON usage_logs FOR EACH ROW EXECUTE FUNCTION int_refuse_model()`);

    proxy = new CuttableProxy(await freePort(), { host: databaseUrl.hostname, port: Number(databaseUrl.port || 5432) });
    await proxy.open();
    const viaProxy = new URL(databaseUrl);
    viaProxy.host = `127.0.0.1:${proxy.port}`;

    // The shipped catalog plus a model so expensive that a large request overflows the ledger's numeric(24, 12).
    catalogDir = mkdtempSync(join(tmpdir(), 'metering-int-catalog-'));
    const catalog = parse(readFileSync(join(ROOT, 'config/models.yaml'), 'utf8')) as { models: Record<string, unknown>[] };
    const simChat = catalog.models.find((model) => model.id === 'sim-chat') as Record<string, unknown>;
    catalog.models.push({ ...simChat, id: 'int-overpriced', name: 'int-overpriced', pricing: { input: 1, output: 1_000_000_000 } });
    catalog.models.push({ ...simChat, id: 'int-always-refused', name: 'int-always-refused' });
    catalog.models.push({ ...simChat, id: 'int-cached', name: 'int-cached', pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } });
    writeFileSync(join(catalogDir, 'models.yaml'), stringify(catalog));

    const env = Object.assign(new MeteringEnv(), {
      DATABASE_URL: viaProxy.toString(),
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      REDIS_URL,
      MODELS_CONFIG: join(catalogDir, 'models.yaml'),
      METERING_ACK_WAIT_MS: 2000,
      METERING_BATCH_LINGER_MS: 20,
      METERING_MAX_DELIVERIES: MAX_DELIVERIES,
    });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const logger = new JsonLoggerService(createJsonLogger('metering-int', 'log', sink));
    @Module({ imports: [ObservabilityModule.forRoot({ metricsEndpoint: false, logger }), MeteringServiceModule.forRoot(env)] })
    class TestRoot {}
    app = await NestFactory.createApplicationContext(TestRoot, { logger });
  });

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await prisma?.$executeRawUnsafe(`DROP TRIGGER IF EXISTS int_refuse_model ON usage_logs`).catch(() => undefined);
    await prisma?.$disconnect();
    await nats?.close();
    if (natsServer && natsServer.exitCode === null) {
      const exited = once(natsServer, 'exit');
      natsServer.kill('SIGTERM');
      await exited;
    }
    if (natsStore) rmSync(natsStore, { recursive: true, force: true, maxRetries: 3 });
    if (catalogDir) rmSync(catalogDir, { recursive: true, force: true });
  });

  const account = async (credits = '100'): Promise<string> => {
    const id = newId('acct');
    await prisma.account.create({ data: { id, plan: 'pro', credits: D(credits) } });
    return id;
  };

  const event = (accountId: string, fields: Partial<UsageRecordedEvent> = {}): UsageRecordedEvent => ({
    requestId: newId('req'),
    accountId,
    keyId: `master_${accountId}`,
    keyType: 'master',
    maskedKey: 'ek-...test',
    model: 'sim-chat',
    route: 'chat.completions',
    inputTokens: 0,
    outputTokens: 1_000_000,
    status: 'success',
    ip: '127.0.0.1',
    timestamp: Math.floor(Date.now() / 1000),
    ...fields,
  });

  const publish = async (data: Uint8Array | UsageRecordedEvent) =>
    nats.jetstream().publish(UsageStream.recordedSubject, data instanceof Uint8Array ? data : codec.encode(data));

  const deadLetters = () => new UsageDeadLetters(nats).list();
  const deadFor = async (requestIds: string[]) => (await deadLetters()).filter((letter) => requestIds.includes(letter.requestId ?? ''));
  const logged = (requestIds: string[]) => prisma.usageLog.findMany({ where: { requestId: { in: requestIds } } });
  const credits = async (accountId: string) => (await prisma.account.findUniqueOrThrow({ where: { id: accountId } })).credits.toFixed();
  const metric = async (reason: string) => {
    const text = await app.get(GatewayMetrics).render();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`gateway_usage_events_dead_lettered_total{reason="${reason}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('charges an event once, in exact decimals, however often it is delivered, and settles its reservation to the exact nano-credit', async () => {
    const accountId = await account('100');
    const redis = new Redis(REDIS_URL);
    try {
      const budget = new BudgetStore(redis);
      await budget.warm(`int-${randomUUID()}`);
      await budget.primeBalance(accountId, toNano(100));
      const usage = event(accountId, { model: 'int-cached', inputTokens: 1234, cacheReadTokens: 1000, cacheWriteTokens: 200, outputTokens: 77 });
      const gate = { accountId, expectedEpoch: '', minute: 0, requestsPerMinute: 10, tokensPerMinute: 10, tokens: 0 };
      expect(await budget.admit({ accountId, requestId: usage.requestId, costNano: toNano(1), ttlMs: 60_000 }, gate)).toMatchObject({ ok: true });

      // 34 uncached input tokens at 3, 1000 cache reads at 0.3, 200 cache writes at 3.75, 77 output at 15 (per million).
      const cost = '0.002307';
      // The same event three times: published again (a retrying publisher), and each copy delivered at least once.
      await Promise.all([publish(usage), publish(usage), publish(usage)]);
      const manager = await nats.jetstreamManager();
      await until('metering has acknowledged every copy', async () => {
        const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
        return info.num_ack_pending === 0 && info.num_pending === 0 && (await logged([usage.requestId])).length === 1;
      });
      const [row] = await logged([usage.requestId]);
      expect(row.credits.toFixed(12)).toBe('0.002307000000');
      expect({ cacheRead: row.cacheReadTokens, cacheWrite: row.cacheWriteTokens }).toEqual({ cacheRead: 1000, cacheWrite: 200 });
      expect(await credits(accountId)).toBe(D(100).minus(cost).toFixed());
      // The reservation is gone and the cached balance moved by the cost, once.
      expect(Number(await redis.get(`bal:{${accountId}}`))).toBe(toNano(100) - toNano(cost));
      expect(Number(await redis.get(`resv:{${accountId}}:total`))).toBe(0);
      expect(await deadFor([usage.requestId])).toEqual([]);
    } finally {
      await redis.quit();
    }
  });

  it("a request the edge voided is charged nothing, whether its void comes after the router's charge or before it", async () => {
    const accountId = await account('100');
    const keyId = newId('key');
    await prisma.apiKey.create({
      data: { id: keyId, accountId, type: 'proxy', keyHash: randomUUID(), maskedKey: 'ek-proxy-...void', allocatedAmount: D(1000), usedAmount: D(0) },
    });
    const redis = new Redis(REDIS_URL);
    const manager = await nats.jetstreamManager();
    const drained = () =>
      until('metering has acknowledged everything', async () => {
        const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
        return info.num_ack_pending === 0 && info.num_pending === 0;
      });
    const usedAmount = async () => (await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).usedAmount.toFixed();
    // The edge's void: published under its own message id, as the edge's UsageVoids does.
    const publishVoid = (usage: UsageRecordedEvent) =>
      nats.jetstream().publish(UsageStream.recordedSubject, codec.encode(usageVoid(usage, { model: usage.model, route: usage.route })), {
        msgID: `${usage.requestId}:void`,
      });
    try {
      const budget = new BudgetStore(redis);
      await budget.warm(`int-${randomUUID()}`);
      await budget.primeBalance(accountId, toNano(100));
      const proxied = { keyId, keyType: 'proxy' as const, maskedKey: 'ek-proxy-...void' };
      // Charged first (1M output tokens of sim-chat), then voided: the charge is taken back, once.
      const charged = event(accountId, proxied);
      await publish(charged);
      await until('the charge is recorded', async () => (await logged([charged.requestId]))[0]?.credits.isZero() === false);
      const cost = (await logged([charged.requestId]))[0].credits.toFixed();
      expect(await credits(accountId)).toBe(D(100).minus(cost).toFixed());
      expect(await usedAmount()).toBe(cost);
      await publishVoid(charged);
      await publishVoid(charged); // a void published again changes nothing
      await until('the void is applied', async () => (await logged([charged.requestId]))[0]?.credits.isZero());
      await drained();
      expect((await logged([charged.requestId])).map((row) => ({ status: row.status, credits: row.credits.toFixed() }))).toEqual([
        { status: 'error', credits: '0' },
      ]);
      expect(await credits(accountId)).toBe('100');
      expect(await usedAmount()).toBe('0');
      // The cached figures that counted the charge are dropped: the next request loads them from the ledger.
      expect(await redis.exists(`bal:{${accountId}}`)).toBe(0);

      // Voided first: the void stands as the request's entry, and the router's event after it is a duplicate.
      const late = event(accountId, proxied);
      await publishVoid(late);
      await until('the void is recorded', async () => (await logged([late.requestId])).length === 1);
      await publish(late);
      await drained();
      expect((await logged([late.requestId])).map((row) => ({ status: row.status, credits: row.credits.toFixed(), model: row.model }))).toEqual([
        { status: 'error', credits: '0', model: 'sim-chat' },
      ]);
      expect(await credits(accountId)).toBe('100');
      expect(await usedAmount()).toBe('0');
      expect(await deadFor([charged.requestId, late.requestId])).toEqual([]);
    } finally {
      await redis.quit();
    }
  });

  it('sets poison events aside with their reason, at once or after the bounded deliveries, and writes the good ones of the same batches', async () => {
    const accountId = await account('100');
    const good = Array.from({ length: 30 }, () => event(accountId));
    const poison = {
      nul: event(accountId, { model: 'a\u0000b' }),
      surrogate: event(accountId, { route: '\ud800' }),
      keyNul: event(accountId, { keyId: 'key\u0000' }),
      invalid: event(accountId, { inputTokens: 2 ** 31 }),
      badKeyType: event(accountId, { keyType: 'root' as UsageRecordedEvent['keyType'] }),
      overflow: event(accountId, { model: 'int-overpriced', outputTokens: 2_000_000_000 }),
      refused: event(accountId, { model: 'int-always-refused' }),
    };
    const notJson = new TextEncoder().encode('{"requestId": "req_broken", \u0000');
    const before = { unstorable: await metric('unstorable_text'), invalid: await metric('invalid_event'), data: await metric('data_error') };

    // One burst, poison interleaved with good events, so they share batches.
    const sequence = [...good.slice(0, 10), poison.nul, poison.surrogate, poison.keyNul, ...good.slice(10, 20), poison.invalid, poison.badKeyType];
    const acks = await Promise.all([...sequence, poison.overflow, poison.refused, ...good.slice(20)].map((item) => publish(item)));
    const notJsonAck = await publish(notJson);

    await until('the good events are in the ledger', async () => (await logged(good.map((item) => item.requestId))).length === good.length);
    expect(await credits(accountId)).toBe(D(100).minus(D('1.5').times(good.length)).toFixed());

    const poisonIds = Object.values(poison).map((item) => item.requestId);
    await until('every poison event is set aside', async () => (await deadFor(poisonIds)).length === poisonIds.length);
    const letters = new Map((await deadFor(poisonIds)).map((letter) => [letter.requestId, letter]));
    const reasonOf = (item: UsageRecordedEvent) => {
      const letter = letters.get(item.requestId) as UsageDeadLetter;
      return { reason: letter.reason, code: letter.code, deliveries: letter.deliveries };
    };
    expect(reasonOf(poison.nul)).toEqual({ reason: 'unstorable_text', code: 'model', deliveries: 1 });
    expect(reasonOf(poison.surrogate)).toEqual({ reason: 'unstorable_text', code: 'route', deliveries: 1 });
    expect(reasonOf(poison.keyNul)).toEqual({ reason: 'unstorable_text', code: 'keyId', deliveries: 1 });
    expect(reasonOf(poison.invalid)).toEqual({ reason: 'invalid_event', code: 'inputTokens', deliveries: 1 });
    expect(reasonOf(poison.badKeyType)).toEqual({ reason: 'invalid_event', code: 'keyType', deliveries: 1 });
    // PostgreSQL refuses it (numeric field overflow): it would on every delivery.
    expect(reasonOf(poison.overflow)).toEqual({ reason: 'data_error', code: '22003', deliveries: 1 });
    // Refused for a reason of unknown kind: retried, then set aside on its last allowed delivery.
    expect(reasonOf(poison.refused)).toEqual({ reason: 'max_deliveries', code: 'P0001', deliveries: MAX_DELIVERIES });

    const nulLetter = letters.get(poison.nul.requestId) as UsageDeadLetter;
    expect(nulLetter.accountId).toBe(accountId);
    expect(nulLetter.streamSequence).toBe(acks[10].seq);
    expect(Date.now() - Date.parse(nulLetter.deadLetteredAt)).toBeLessThan(60_000);
    // The original bytes, exactly as published.
    expect(Buffer.from(nulLetter.payload, 'base64').toString('utf8')).toBe(JSON.stringify(poison.nul));
    expect((await deadLetters()).find((letter) => letter.streamSequence === notJsonAck.seq)).toMatchObject({ reason: 'not_json', deliveries: 1 });
    expect(await logged(poisonIds)).toEqual([]);

    expect(await metric('unstorable_text')).toBe(before.unstorable + 3);
    expect(await metric('invalid_event')).toBe(before.invalid + 2);
    expect(await metric('data_error')).toBe(before.data + 1);
    // Logged with the request id and the reason, the poison text escaped.
    const line = logLines.find((candidate) => candidate.includes(poison.nul.requestId) && candidate.includes('unstorable_text'));
    expect(line).toBeDefined();
    const texts = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(texts) : [];
    const raw = logLines.flatMap((candidate) => texts(JSON.parse(candidate))).filter((text) => text.includes('\u0000') || /[\ud800-\udfff]/.test(text));
    expect(raw).toEqual([]);

    // Nothing left unacknowledged: metering has moved past every one of them.
    const manager = await nats.jetstreamManager();
    await until('the consumer has nothing pending', async () => {
      const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
      return info.num_ack_pending === 0 && info.num_pending === 0;
    });
  });

  it('a PostgreSQL outage sets nothing aside and spends no delivery; once it is back every event is written once', async () => {
    const accountId = await account('100');
    const manager = await nats.jetstreamManager();
    const deadBefore = (await manager.streams.info(UsageDeadStream.name)).state.messages;
    await proxy.close();
    try {
      const good = Array.from({ length: 20 }, () => event(accountId));
      const overflow = event(accountId, { model: 'int-overpriced', outputTokens: 2_000_000_000 });
      await Promise.all([...good.slice(0, 10), overflow, ...good.slice(10)].map((item) => publish(item)));
      await until('metering holds every event', async () => {
        const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
        return info.num_pending === 0 && info.num_ack_pending === good.length + 1;
      });
      // Long enough for several redeliveries and the whole delivery bound under a retry-by-redelivery
      // scheme (2 s ack wait, 2 s nak delay, 3 deliveries): nothing is set aside, nothing redelivered.
      const watchUntil = Date.now() + 4 * 2000;
      while (Date.now() < watchUntil) {
        const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
        expect({ redelivered: info.num_redelivered, dead: (await manager.streams.info(UsageDeadStream.name)).state.messages }).toEqual({
          redelivered: 0,
          dead: deadBefore,
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await proxy.open();
      await until('the good events are in the ledger', async () => (await logged(good.map((item) => item.requestId))).length === good.length);
      // The event PostgreSQL refuses is still set aside, once the database can say so.
      await until('the overflowing event is set aside', async () => (await deadFor([overflow.requestId])).length === 1);
      expect((await deadFor([overflow.requestId]))[0]).toMatchObject({ reason: 'data_error', code: '22003' });
      expect((await manager.streams.info(UsageDeadStream.name)).state.messages).toBe(deadBefore + 1);
      expect(await credits(accountId)).toBe(D(100).minus(D('1.5').times(good.length)).toFixed());
    } finally {
      await proxy.open().catch(() => undefined);
    }
  });

  it('a replayed dead letter is recorded and charged once; sanitized when its text cannot be stored', async () => {
    const accountId = await account('100');
    const nul = event(accountId, { model: 'sim-chat\u0000' });
    const fine = event(accountId, { model: 'int-always-refused' });
    await publish(nul);
    await until('the NUL event is set aside', async () => (await deadFor([nul.requestId])).length === 1);

    const replays = new UsageDeadLetters(nats);
    // As it is, it would only be set aside again: skipped, and kept.
    const [asIs] = await replays.replay(await deadFor([nul.requestId]));
    expect(asIs).toMatchObject({ outcome: 'skipped', why: expect.stringMatching(/--sanitize/) });
    expect(await deadFor([nul.requestId])).toHaveLength(1);

    const [sanitized] = await replays.replay(await deadFor([nul.requestId]), { sanitize: true });
    expect(sanitized).toMatchObject({ outcome: 'republished', requestId: nul.requestId, sanitized: true });
    expect(await deadFor([nul.requestId])).toEqual([]);
    await until('the replayed event is in the ledger', async () => (await logged([nul.requestId])).length === 1);
    const [row] = await logged([nul.requestId]);
    expect(row.model).toBe('sim-chat\uFFFD');
    // Not a catalog model once escaped: logged, charged nothing, like any unknown model.
    expect(await credits(accountId)).toBe('100');

    // An event that failed for a reason since fixed is replayed as it is, and charged once even when replayed twice.
    await publish(fine);
    await until('the refused event is set aside', async () => (await deadFor([fine.requestId])).length === 1, 30_000);
    await prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS int_refuse_model ON usage_logs`);
    const letter = await deadFor([fine.requestId]);
    await replays.replay(letter);
    await replays.replay(letter);
    await until('the refused event is in the ledger', async () => (await logged([fine.requestId])).length === 1);
    const manager = await nats.jetstreamManager();
    await until('the consumer has nothing pending', async () => {
      const info = await manager.consumers.info(UsageStream.name, UsageStream.meteringConsumer);
      return info.num_ack_pending === 0 && info.num_pending === 0;
    });
    expect(await logged([fine.requestId])).toHaveLength(1);
    expect(await credits(accountId)).toBe(D(100).minus('1.5').toFixed());
  });
});
