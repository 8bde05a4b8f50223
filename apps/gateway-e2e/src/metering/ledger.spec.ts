import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, createAccount, createDevPass, createProxyKey, sleep, TestAccount } from '../support/api';
import { freePort, untilReady } from '../support/processes';
import { valueOf } from '../support/prometheus';
import { SUITE_INFO_FILE, suiteInfo } from '../support/suite-info';

const PRICE = { input: 0.5, output: 1.5 }; // sim-chat, credits per million tokens (config/models.yaml)
const cost = (usage: { prompt_tokens: number; completion_tokens: number }) =>
  (usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output) / 1_000_000;

const chat = (key: string, content: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/v1/chat/completions', { key, body: { model: 'sim-chat', messages: [{ role: 'user', content }], ...extra } });

/** Waits until the ledger holds `count` entries for the key (metering is asynchronous). */
async function logsFor(key: string, count: number, query = '', attempts = 100): Promise<any[]> {
  let entries: any[] = [];
  for (let i = 0; i < attempts; i++) {
    const response = await api('GET', `/v1/user/logs?limit=500${query}`, { key });
    entries = response.body;
    if (Array.isArray(entries) && entries.length >= count) return entries;
    await sleep(100);
  }
  throw new Error(`expected ${count} log entries, saw ${JSON.stringify(entries).slice(0, 300)}`);
}

const closeTo = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThan(1e-9);

describe('metering: ledger, credits, logs and the usage summary', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('charges each request once at the model price, and /user/me and /user/logs show the ledger', async () => {
    const usages: { prompt_tokens: number; completion_tokens: number }[] = [];
    for (const prompt of ['first question', 'second question, a little longer', 'third']) {
      const response = await chat(account.masterKey, prompt);
      expect(response.status).toBe(200);
      usages.push(response.body.usage);
    }
    const streamed = await chat(account.masterKey, 'a streamed one', { stream: true, stream_options: { include_usage: true } });
    const usageChunk = streamed.text
      .split('\n')
      .filter((line: string) => line.startsWith('data: {'))
      .map((line: string) => JSON.parse(line.slice(6)))
      .find((chunk: any) => chunk.usage);
    usages.push(usageChunk.usage);

    const entries = await logsFor(account.masterKey, 4);
    expect(entries).toHaveLength(4);
    for (const entry of entries) {
      expect(entry).toEqual({
        request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
        key: expect.stringMatching(/^ek-\.\.\.[A-Za-z0-9_-]{4}$/),
        key_id: expect.any(String),
        model: 'sim-chat',
        route: 'chat.completions',
        credits: expect.any(Number),
        timestamp: expect.any(Number),
        status: 'success',
        ip: '127.0.0.1',
        input_tokens: expect.any(Number),
        output_tokens: expect.any(Number),
        // The simulator uses no prompt cache.
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      });
    }
    expect(entries[0].timestamp).toBeGreaterThanOrEqual(entries[3].timestamp);
    const expectedTotal = usages.reduce((sum, usage) => sum + cost(usage), 0);
    closeTo(
      entries.reduce((sum, entry) => sum + entry.credits, 0),
      expectedTotal,
    );

    const me = await api('GET', '/v1/user/me', { key: account.masterKey });
    expect(me.status).toBe(200);
    expect(me.body.subscription).toBe('pro');
    closeTo(me.body.credits, 100 - expectedTotal);
    expect(me.body.usage).toEqual({
      input_tokens: usages.reduce((sum, usage) => sum + usage.prompt_tokens, 0),
      output_tokens: usages.reduce((sum, usage) => sum + usage.completion_tokens, 0),
    });
    expect(me.body.endpoints).toEqual({ 'chat.completions': 4, 'images.generations': 0, 'images.edits': 0, 'videos.generations': 0 });
    expect(me.body.history).toHaveLength(30);
    expect(me.body.history[29]).toEqual({ date: new Date().toISOString().slice(0, 10), requests: 4 });
    expect(me.body.history.slice(0, 29).every((day: { requests: number }) => day.requests === 0)).toBe(true);
  });

  it("adds a proxy key's charges to its used_ammount and shows the key only its own requests", async () => {
    const owner = createAccount('pro', '50');
    const proxy = await createProxyKey(owner.masterKey, { allocated_ammount: 10 });
    await chat(owner.masterKey, 'from the master key');
    const usage = (await chat(proxy.key, 'from the proxy key')).body.usage;
    const own = await logsFor(proxy.key, 1);
    expect(own).toHaveLength(1);
    expect(own[0].key).toBe(`ek-proxy-...${proxy.key.slice(-4)}`);
    expect(await logsFor(owner.masterKey, 2)).toHaveLength(2);
    const record = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: proxy.key } });
    closeTo(record.body.used_ammount, cost(usage));
  });

  it('never charges DevPass usage, and logs failed requests as error at no charge', async () => {
    const owner = createAccount('standard', '20');
    const devKey = createDevPass(owner.accountId);
    const dev = await api('POST', '/v1/chat/completions', {
      key: devKey,
      body: { model: 'sim-coder:dev', messages: [{ role: 'user', content: 'write code' }] },
    });
    expect(dev.status).toBe(200);
    const failed = await api('POST', '/v1/chat/completions', { key: owner.masterKey, body: { model: 'sim-chat', messages: 'nope' } });
    expect(failed.status).toBe(400);
    const entries = await logsFor(owner.masterKey, 2);
    const byStatus = Object.fromEntries(entries.map((entry) => [entry.status, entry]));
    expect(byStatus.success).toMatchObject({ model: 'sim-coder:dev', credits: 0, key: expect.stringMatching(/^ek-dev-\.\.\./) });
    expect(byStatus.error).toMatchObject({ model: 'sim-chat', credits: 0 });
    expect((await api('GET', '/v1/user/me', { key: owner.masterKey })).body.credits).toBe(20);
  });

  it('pages through the logs newest first, every entry exactly once, with filters', async () => {
    const owner = createAccount('pro', '10');
    for (let i = 0; i < 7; i++) await chat(owner.masterKey, `page ${i}`);
    await api('POST', '/v1/messages', {
      headers: { 'x-api-key': owner.masterKey },
      body: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    });
    const all = await logsFor(owner.masterKey, 8);
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const response: any = await api('GET', `/v1/user/logs?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.masterKey });
      expect(response.status).toBe(200);
      expect(response.body.length).toBeLessThanOrEqual(3);
      seen.push(...response.body);
      cursor = response.headers.get('x-next-cursor');
    } while (cursor);
    expect(seen).toEqual(all);
    const messages = await api('GET', '/v1/user/logs?route=messages', { key: owner.masterKey });
    expect(messages.body).toHaveLength(1);
    expect(messages.body[0].route).toBe('messages');
    const none = await api('GET', `/v1/user/logs?since=${Math.floor(Date.now() / 1000) + 60}`, { key: owner.masterKey });
    expect(none.body).toEqual([]);
    // until (Unix seconds, exclusive), model and status filter too.
    expect((await api('GET', `/v1/user/logs?until=${all[all.length - 1].timestamp}`, { key: owner.masterKey })).body).toEqual([]);
    expect((await api('GET', `/v1/user/logs?until=${all[0].timestamp + 1}`, { key: owner.masterKey })).body).toEqual(all);
    expect((await api('GET', '/v1/user/logs?model=sim-chat&status=success', { key: owner.masterKey })).body).toEqual(all);
    expect((await api('GET', '/v1/user/logs?model=sim-reasoner', { key: owner.masterKey })).body).toEqual([]);
    expect((await api('GET', '/v1/user/logs?status=error', { key: owner.masterKey })).body).toEqual([]);
  });

  it('answers 50 entries by default, newest first', async () => {
    const owner = createAccount('enterprise', '100');
    await Promise.all(Array.from({ length: 55 }, (_, i) => chat(owner.masterKey, `default page ${i}`)));
    const all = await logsFor(owner.masterKey, 55);
    expect(all).toHaveLength(55);
    const first = await api('GET', '/v1/user/logs', { key: owner.masterKey });
    expect(first.body).toEqual(all.slice(0, 50));
    const timestamps = all.map((entry: any) => entry.timestamp);
    expect([...timestamps].sort((a, b) => b - a)).toEqual(timestamps);
  });

  it('rejects bad log queries with 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=abc', 'limit'],
      ['status=done', 'status'],
      ['cursor=!!', 'cursor'],
      ['since=-5', 'since'],
      ['request_id=abc', 'request_id'],
      ['request_id=req_0F3C9A1B2C3D4E5F60718293A4B5C6D7', 'request_id'],
      [`request_id=req_${'0'.repeat(33)}`, 'request_id'],
    ]) {
      const response = await api('GET', `/v1/user/logs?${query}`, { key: account.masterKey });
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(response.body.error.message).toContain(param);
    }
  });

  it('two metering replicas share the events, and one killed mid-burst loses nothing: one entry per completed request, credits exact', async () => {
    const { services, env, root } = suiteInfo();
    // A second replica in the same durable consumer, beside the suite's.
    const secondPort = await freePort();
    const second = spawn(process.execPath, [join(root, 'dist/apps/metering-service/src/main.js')], {
      env: { ...env, ...(services['metering-service'].env ?? {}), HEALTH_PORT: String(secondPort) },
      stdio: 'ignore',
    });
    await untilReady(`http://127.0.0.1:${secondPort}/readyz`, second);
    const owner = createAccount('enterprise', '1000');
    const burst = Array.from({ length: 500 }, (_, i) => chat(owner.masterKey, `burst ${i}`));
    await sleep(150);
    process.kill(services['metering-service'].pid, 'SIGKILL');
    const results = await Promise.all(burst);
    const completed = results.filter((result) => result.status === 200);
    expect(completed.length).toBe(500);
    const replacement = spawn(process.execPath, [join(root, 'dist/apps/metering-service/src/main.js')], {
      env: { ...env, ...(services['metering-service'].env ?? {}), HEALTH_PORT: String(services['metering-service'].healthPort) },
      stdio: 'ignore',
    });
    try {
      const entries = await logsFor(owner.masterKey, 500, '', 600);
      expect(entries).toHaveLength(500);
      const expected = completed.reduce((sum, result) => sum + cost(result.body.usage), 0);
      closeTo(
        entries.reduce((sum, entry) => sum + entry.credits, 0),
        expected,
      );
      await sleep(500);
      const me = await api('GET', '/v1/user/me', { key: owner.masterKey });
      closeTo(me.body.credits, 1000 - expected);
      expect(me.body.endpoints['chat.completions']).toBe(500);
      // The second replica took its share (the killed one's included).
      const secondMetrics = await (await fetch(`http://127.0.0.1:${secondPort}/metrics`)).text();
      expect(valueOf(secondMetrics, 'gateway_ledger_writes_total', { result: 'written' })).toBeGreaterThan(0);
    } finally {
      second.kill('SIGTERM');
      // The replacement serves the tests that follow; the global teardown stops it.
      services['metering-service'].pid = replacement.pid as number;
      writeFileSync(SUITE_INFO_FILE, JSON.stringify(suiteInfo()));
    }
  });
});
