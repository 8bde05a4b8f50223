/**
 * Media requests in usage: one usage event each, ledger entries in `/v1/user/logs` (token fields
 * for embeddings and moderations, none for images), `/v1/user/me` counting `images.generations`,
 * and credits debited at the catalog's prices (per image for image models).
 */
import { api, createAccount, sleep } from '../support/api';
import { newRequestId, openaiClient, withRequestId } from '../support/clients';
import { FAKE_IMAGE_PER_ITEM } from '../support/media-test-models';
import { UsageWatcher } from '../support/usage-events';

const SIM_IMAGE_PER_ITEM = 0.04; // config/models.yaml
const SIM_EMBED_INPUT = 0.02; // credits per million input tokens
const SIM_MODERATION_INPUT = 0.01;

/** Waits until the ledger holds `count` entries for the key (metering is asynchronous). */
async function logsFor(key: string, count: number, attempts = 100): Promise<any[]> {
  let entries: any[] = [];
  for (let i = 0; i < attempts; i++) {
    const response = await api('GET', '/v1/user/logs?limit=500', { key });
    entries = response.body;
    if (Array.isArray(entries) && entries.length >= count) return entries;
    await sleep(100);
  }
  throw new Error(`expected ${count} log entries, saw ${JSON.stringify(entries).slice(0, 300)}`);
}

const closeTo = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThan(1e-9);

describe('media usage and billing', () => {
  let usage: UsageWatcher;

  beforeAll(async () => {
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  it('logs and charges embeddings, moderations and images; /user/me counts images.generations', async () => {
    const account = createAccount('pro', '10');
    const client = openaiClient(account.masterKey);
    const ids = { embed: newRequestId('embed'), moderate: newRequestId('mod'), images: newRequestId('img'), inline: newRequestId('img') };
    const embedded = await client.embeddings.create({ model: 'sim-embed', input: ['one two three', 'four five'] }, withRequestId(ids.embed));
    await client.moderations.create({ input: 'a calm sentence for the ledger' }, withRequestId(ids.moderate));
    await client.images.generate({ prompt: 'three images', n: 3, size: '256x256' }, withRequestId(ids.images));
    await client.images.generate(
      { model: 'fake-openai-image', prompt: 'two more', n: 2, size: '256x256', response_format: 'b64_json' },
      withRequestId(ids.inline),
    );

    const moderation = await usage.single(ids.moderate);
    expect(await usage.single(ids.embed)).toMatchObject({
      route: 'embeddings',
      model: 'sim-embed',
      inputTokens: embedded.usage.prompt_tokens,
      outputTokens: 0,
      status: 'success',
    });
    expect(moderation).toMatchObject({ route: 'moderations', model: 'sim-moderation', outputTokens: 0, status: 'success', provider: 'simulator' });
    expect(moderation.inputTokens).toBeGreaterThan(0);
    expect(await usage.single(ids.images)).toMatchObject({
      route: 'images.generations',
      model: 'sim-image',
      inputTokens: 0,
      outputTokens: 0,
      units: 3,
      status: 'success',
    });
    expect(await usage.single(ids.inline)).toMatchObject({ route: 'images.generations', model: 'fake-openai-image', units: 2, provider: 'openai' });

    const entries = await logsFor(account.masterKey, 4);
    const byModel = Object.fromEntries(entries.map((entry) => [entry.model, entry]));
    const expected = {
      embed: (embedded.usage.prompt_tokens * SIM_EMBED_INPUT) / 1_000_000,
      moderate: (moderation.inputTokens * SIM_MODERATION_INPUT) / 1_000_000,
      images: 3 * SIM_IMAGE_PER_ITEM,
      inline: 2 * FAKE_IMAGE_PER_ITEM,
    };
    expect(byModel['sim-embed']).toEqual({
      request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
      key: expect.stringMatching(/^ek-\.\.\./),
      key_id: expect.any(String),
      model: 'sim-embed',
      route: 'embeddings',
      credits: expect.any(Number),
      timestamp: expect.any(Number),
      status: 'success',
      ip: '127.0.0.1',
      input_tokens: embedded.usage.prompt_tokens,
      output_tokens: 0,
    });
    closeTo(byModel['sim-embed'].credits, expected.embed);
    expect(byModel['sim-moderation']).toMatchObject({ route: 'moderations', input_tokens: moderation.inputTokens, output_tokens: 0 });
    closeTo(byModel['sim-moderation'].credits, expected.moderate);
    for (const model of ['sim-image', 'fake-openai-image']) {
      expect(byModel[model]).toEqual({
        request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
        key: expect.any(String),
        key_id: expect.any(String),
        model,
        route: 'images.generations',
        credits: expect.any(Number),
        timestamp: expect.any(Number),
        status: 'success',
        ip: '127.0.0.1',
      });
    }
    closeTo(byModel['sim-image'].credits, expected.images);
    closeTo(byModel['fake-openai-image'].credits, expected.inline);

    const me = await api('GET', '/v1/user/me', { key: account.masterKey });
    expect(me.body.endpoints).toMatchObject({ 'images.generations': 2, embeddings: 1, moderations: 1, 'chat.completions': 0 });
    expect(me.body.usage).toEqual({ input_tokens: embedded.usage.prompt_tokens + moderation.inputTokens, output_tokens: 0 });
    closeTo(me.body.credits, 10 - expected.embed - expected.moderate - expected.images - expected.inline);
  });

  it('records failed media requests as error, free of charge', async () => {
    const account = createAccount('pro', '5');
    const requestId = newRequestId('broken');
    const broken = await api('POST', '/v1/images/generations', {
      key: account.masterKey,
      body: { model: 'broken-image', prompt: 'x', n: 1 },
      headers: { 'x-request-id': requestId },
    });
    expect(broken.status).toBe(502);
    expect(await usage.single(requestId)).toMatchObject({ route: 'images.generations', model: 'broken-image', status: 'error' });
    expect((await usage.single(requestId)).units).toBeUndefined();
    const [entry] = await logsFor(account.masterKey, 1);
    expect(entry).toMatchObject({ model: 'broken-image', route: 'images.generations', status: 'error', credits: 0 });
    expect((await api('GET', '/v1/user/me', { key: account.masterKey })).body.credits).toBe(5);
  });

  it('refuses with 402 an image request the credits cannot cover, before generating anything', async () => {
    const account = createAccount('pro', '0.1');
    const response = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: 'too many', n: 3, size: '256x256' } });
    expect(response.status).toBe(402);
    expect(response.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_credits', message: expect.stringContaining('0.12') });
    const affordable = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: 'just two', n: 2, size: '256x256' } });
    expect(affordable.status).toBe(200);
  });
});
