/**
 * Video usage: one ledger entry per job priced per video (`pricing.per_item`), no token fields, counted
 * under `videos.generations`; a failed job is logged as `error` and costs nothing; the cost is
 * reserved before the job is queued.
 */
import { api, createAccount, createProxyKey, sleep } from '../support/api';
import { VideoStream } from '../support/video-stream';

const PER_VIDEO = 0.25; // per_item of the e2e video models (global-setup.ts)

async function videoLogs(key: string, count: number): Promise<any[]> {
  let entries: any[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    entries = (await api('GET', '/v1/user/logs?route=videos.generations', { key })).body;
    if (Array.isArray(entries) && entries.length >= count) return entries;
    await sleep(100);
  }
  throw new Error(`expected ${count} video log entries, saw ${JSON.stringify(entries)}`);
}

const generate = async (key: string, model: string, prompt: string) => (await VideoStream.open({ key, body: { model, prompt } })).final();

describe('video usage and billing', () => {
  it('charges per_item once per video, logs no token fields, counts videos.generations; a failed job is an error entry at 0', async () => {
    const account = createAccount('pro', '10');
    const results = await Promise.all([
      generate(account.masterKey, 'sim-video-quick', 'first clip'),
      generate(account.masterKey, 'fake-openai-video', 'second clip'),
      generate(account.masterKey, 'fake-openai-video-fail', 'third clip'),
    ]);
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'failed']);

    const entries = await videoLogs(account.masterKey, 3);
    expect(entries).toHaveLength(3);
    const byModel = Object.fromEntries(entries.map((entry) => [entry.model, entry]));
    for (const model of ['sim-video-quick', 'fake-openai-video']) {
      expect(byModel[model]).toEqual({
        request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
        key: expect.stringMatching(/^ek-\.\.\.[A-Za-z0-9_-]{4}$/),
        key_id: expect.any(String),
        model,
        route: 'videos.generations',
        credits: PER_VIDEO,
        timestamp: expect.any(Number),
        status: 'success',
        ip: '127.0.0.1',
      });
    }
    expect(byModel['fake-openai-video-fail']).toMatchObject({ status: 'error', credits: 0 });
    expect(byModel['fake-openai-video-fail']).not.toHaveProperty('input_tokens');

    const me = await api('GET', '/v1/user/me', { key: account.masterKey });
    expect(me.body.endpoints['videos.generations']).toBe(3);
    expect(me.body.credits).toBeCloseTo(10 - 2 * PER_VIDEO, 9);
  });

  it('reserves the price before queueing (402 when it cannot), and a failed job releases its reservation', async () => {
    const poor = createAccount('pro', '0.2');
    const refused = await api('POST', '/v1/videos/generations', {
      key: poor.masterKey,
      body: { model: 'sim-video-quick', prompt: 'too dear' },
      headers: { accept: 'text/event-stream' },
    });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');

    // Enough for one video: a running job holds its price, so a second one cannot start meanwhile.
    const holder = createAccount('pro', '0.3');
    const running = await VideoStream.open({ key: holder.masterKey, body: { model: 'sim-video-slow', prompt: 'holds the credits' } });
    await running.next();
    const meanwhile = await api('POST', '/v1/videos/generations', {
      key: holder.masterKey,
      body: { model: 'sim-video-quick', prompt: 'waits its turn' },
      headers: { accept: 'text/event-stream' },
    });
    expect(meanwhile.status).toBe(402);
    expect((await running.final()).status).toBe('completed');

    // A failed job is metered at 0, which releases its reservation: the same credits pay for a video.
    const account = createAccount('pro', '0.3');
    expect((await generate(account.masterKey, 'fake-openai-video-fail', 'doomed')).status).toBe('failed');
    await videoLogs(account.masterKey, 1);
    expect((await generate(account.masterKey, 'sim-video-quick', 'paid with released credits')).status).toBe('completed');
    const entries = await videoLogs(account.masterKey, 2);
    expect(entries.map((entry) => [entry.status, entry.credits])).toEqual([
      ['success', PER_VIDEO],
      ['error', 0],
    ]);
  });

  it("charges a proxy key's allocation for its videos", async () => {
    const account = createAccount('pro', '10');
    const proxy = await createProxyKey(account.masterKey, { allocated_ammount: 1, model_whitelist: ['sim-video-quick'] });
    expect((await generate(proxy.key, 'sim-video-quick', 'through a proxy key')).status).toBe('completed');
    await videoLogs(proxy.key, 1);
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: account.masterKey, body: { proxy_key: proxy.key } });
    expect(lookup.body.used_ammount).toBeCloseTo(PER_VIDEO, 9);
    const outside = await api('POST', '/v1/videos/generations', {
      key: proxy.key,
      body: { model: 'fake-openai-video', prompt: 'not whitelisted' },
      headers: { accept: 'text/event-stream' },
    });
    expect(outside.status).toBe(403);
  });
});
