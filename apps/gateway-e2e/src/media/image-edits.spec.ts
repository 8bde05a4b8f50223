/**
 * `POST /v1/images/edits` through the official `openai` client, with PNGs made here: the simulator
 * answers the input inverted (a real PNG), every request is billed under `images.edits` at the exact
 * decimal and counted by `/user/me`; oversized uploads are refused while they are read.
 */
import OpenAI, { toFile } from 'openai';
import { Client } from 'pg';
import { PNG } from 'pngjs';
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { fakeRequests, marker, openaiClient } from '../support/clients';
import type { MultipartSummary } from '../support/fake-openai-audio';
import { FAKE_IMAGE_PER_ITEM, FAKE_IMAGE_TOKEN_PRICING } from '../support/media-test-models';
import { FAKE_IMAGE_USAGE, REJECT_400_MESSAGE } from '../support/fake-openai-media';
import { createHash } from 'node:crypto';
import { suiteInfo } from '../support/suite-info';

/** A `width`×`height` PNG of one colour (`alpha`: 0 for a transparent mask). */
function png(width: number, height: number, rgb: [number, number, number], alpha = 255): Buffer {
  const image = new PNG({ width, height });
  for (let pixel = 0; pixel < width * height; pixel++) image.data.set([...rgb, alpha], pixel * 4);
  return PNG.sync.write(image);
}

/** `sim-image`'s catalog price per image. */
const SIM_PER_IMAGE = 0.04;

describe('POST /v1/images/edits', () => {
  let account: TestAccount;
  let openai: OpenAI;
  let db: Client;

  async function ledgerRow(
    requestId: string,
  ): Promise<{ route: string; model: string; status: string; credits: string; input_tokens: number | null; output_tokens: number | null }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await db.query(
        'SELECT route, model, status, credits::text AS credits, input_tokens, output_tokens FROM usage_logs WHERE request_id = $1',
        [requestId],
      );
      if (rows.length === 1) return rows[0];
      if (Date.now() > deadline) throw new Error(`${requestId} never reached the ledger`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const decimal = (value: number): string => {
    const [whole, fraction = ''] = String(value).split('.');
    return `${whole}.${fraction.padEnd(12, '0')}`;
  };

  const decoded = (b64: string | undefined): PNG => PNG.sync.read(Buffer.from(b64!, 'base64'));

  beforeAll(async () => {
    account = createAccount('pro', '100');
    openai = openaiClient(account.masterKey);
    db = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  it('one image: the input inverted, billed one image under images.edits', async () => {
    const { data, response } = await openai.images
      .edit({
        image: await toFile(png(8, 6, [10, 20, 30]), 'in.png', { type: 'image/png' }),
        prompt: 'invert it',
        model: 'sim-image',
        response_format: 'b64_json',
      })
      .withResponse();
    expect(data.data).toHaveLength(1);
    const image = decoded(data.data![0].b64_json);
    expect([image.width, image.height]).toEqual([8, 6]);
    expect([...image.data.subarray(0, 4)]).toEqual([245, 235, 225, 255]);
    const row = await ledgerRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ route: 'images.edits', model: 'sim-image', status: 'success', credits: decimal(SIM_PER_IMAGE) });
  });

  it('with a mask and n=2: two different edits, only where the mask is transparent, billed two images; URLs by default', async () => {
    const mask = new PNG({ width: 4, height: 4 });
    for (let pixel = 0; pixel < 16; pixel++) mask.data.set([0, 0, 0, pixel < 8 ? 0 : 255], pixel * 4);
    const { data, response } = await openai.images
      .edit({
        image: await toFile(png(4, 4, [100, 100, 100]), 'in.png', { type: 'image/png' }),
        mask: await toFile(PNG.sync.write(mask), 'mask.png', { type: 'image/png' }),
        prompt: 'half of it',
        model: 'sim-image',
        n: 2,
        response_format: 'b64_json',
      })
      .withResponse();
    expect(data.data).toHaveLength(2);
    const [first, second] = data.data!.map((item) => decoded(item.b64_json));
    expect([...first.data.subarray(0, 3)]).toEqual([155, 155, 155]);
    expect([...first.data.subarray(60, 63)]).toEqual([100, 100, 100]);
    expect(second.data.equals(first.data)).toBe(false);
    const row = await ledgerRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ route: 'images.edits', credits: decimal(2 * SIM_PER_IMAGE) });

    const urls = await openai.images.edit({ image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }), prompt: 'p', model: 'sim-image' });
    const fetched = await fetch(urls.data![0].url!, { headers: { authorization: `Bearer ${account.masterKey}` } });
    expect(fetched.status).toBe(200);
    expect(PNG.sync.read(Buffer.from(await fetched.arrayBuffer())).data.subarray(0, 3)).toEqual(Buffer.from([255, 255, 255]));
  });

  it('an array of images (image[]): billed like one edit of n images', async () => {
    const { data, response } = await openai.images
      .edit({
        image: [await toFile(png(3, 3, [1, 2, 3]), 'a.png', { type: 'image/png' }), await toFile(png(5, 5, [9, 9, 9]), 'b.png', { type: 'image/png' })],
        prompt: 'both',
        model: 'sim-image',
        response_format: 'b64_json',
      })
      .withResponse();
    expect(data.data).toHaveLength(1);
    expect(decoded(data.data![0].b64_json).width).toBe(3);
    const row = await ledgerRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ route: 'images.edits', credits: decimal(SIM_PER_IMAGE) });
  });

  it('/user/me counts the edits under images.edits', async () => {
    const counted = createAccount('pro', '10');
    const client = openaiClient(counted.masterKey);
    for (let i = 0; i < 2; i++) {
      await client.images.edit({
        image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }),
        prompt: 'p',
        model: 'sim-image',
        response_format: 'b64_json',
      });
    }
    const deadline = Date.now() + 15_000;
    let me = await api('GET', '/v1/user/me', { key: counted.masterKey });
    while (me.body.endpoints?.['images.edits'] !== 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      me = await api('GET', '/v1/user/me', { key: counted.masterKey });
    }
    expect(me.body.endpoints['images.edits']).toBe(2);
  });

  it('a proxy key without the model in its whitelist gets 403 and is charged nothing', async () => {
    const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'] });
    const refused = await openaiClient(proxy.key)
      .images.edit({ image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }), prompt: 'p', model: 'sim-image' })
      .catch((error) => error);
    expect(refused.status).toBe(403);
    expect(refused.param).toBe('model');
    const { rows } = await db.query('SELECT count(*)::int AS count FROM usage_logs WHERE masked_key LIKE $1 AND credits <> 0', [`%${proxy.key.slice(-4)}`]);
    expect(rows[0].count).toBe(0);
  });

  it('against an OpenAI upstream: the multipart body it receives carries the same fields and file bytes', async () => {
    const input = png(16, 16, [200, 10, 10]);
    const mask = png(16, 16, [0, 0, 0], 0);
    const name = `${marker('fwd')}.png`;
    const { data, response } = await openai.images
      .edit({
        image: await toFile(input, name, { type: 'image/png' }),
        mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
        prompt: 'forward me',
        model: 'fake-openai-image',
        n: 2,
        size: '256x256',
        background: 'opaque',
        output_format: 'png',
        user: 'u-1',
        response_format: 'b64_json',
      })
      .withResponse();
    expect(data.data).toHaveLength(2);
    const received = (await fakeRequests('openai'))
      .filter((request) => (request.body as MultipartSummary | undefined)?.files?.image?.filename === name)
      .map((request) => ({ path: request.path, body: request.body as MultipartSummary }));
    expect(received).toHaveLength(1);
    expect(received[0].path).toBe('/v1/images/edits');
    const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    expect(received[0].body.files.image).toMatchObject({ size: input.length, sha256: sha256(input), contentType: 'image/png' });
    expect(received[0].body.files.mask).toMatchObject({ filename: 'mask.png', size: mask.length, sha256: sha256(mask) });
    expect(received[0].body.fields).toMatchObject({
      model: 'painter',
      prompt: 'forward me',
      n: '2',
      size: '256x256',
      background: 'opaque',
      output_format: 'png',
      user: 'u-1',
      response_format: 'b64_json',
    });
    const row = await ledgerRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ route: 'images.edits', model: 'fake-openai-image', credits: decimal(2 * FAKE_IMAGE_PER_ITEM) });
  });

  describe('an upstream that reports usage (GPT image models)', () => {
    const tokenCredits = decimal(
      (FAKE_IMAGE_USAGE.input_tokens * FAKE_IMAGE_TOKEN_PRICING.input + FAKE_IMAGE_USAGE.output_tokens * FAKE_IMAGE_TOKEN_PRICING.output) / 1_000_000,
    );

    it("an array of images reaches it as image[] with every file's bytes; its usage is returned and billed instead of the per-image price", async () => {
      const first = png(3, 3, [1, 2, 3]);
      const second = png(5, 5, [9, 9, 9]);
      const name = `${marker('arr')}.png`;
      const { data, response } = await openai.images
        .edit({
          image: [await toFile(first, name, { type: 'image/png' }), await toFile(second, 'second.png', { type: 'image/png' })],
          prompt: 'both of them',
          model: 'fake-openai-image-tokens',
          n: 2,
          size: '256x256',
          response_format: 'b64_json',
        })
        .withResponse();
      expect(data.data).toHaveLength(2);
      expect(data.usage).toEqual(FAKE_IMAGE_USAGE);
      const received = (await fakeRequests('openai')).filter((request) => (request.body as MultipartSummary | undefined)?.fileList?.[0]?.filename === name);
      expect(received).toHaveLength(1);
      const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
      expect((received[0].body as MultipartSummary).fileList).toEqual([
        { field: 'image[]', filename: name, contentType: 'image/png', size: first.length, sha256: sha256(first) },
        { field: 'image[]', filename: 'second.png', contentType: 'image/png', size: second.length, sha256: sha256(second) },
      ]);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toEqual({
        route: 'images.edits',
        model: 'fake-openai-image-tokens',
        status: 'success',
        credits: tokenCredits,
        input_tokens: FAKE_IMAGE_USAGE.input_tokens,
        output_tokens: FAKE_IMAGE_USAGE.output_tokens,
      });
    });

    it('a generation likewise: usage returned, billed by its tokens', async () => {
      const { data, response } = await openai.images
        .generate({ prompt: 'tokens please', model: 'fake-openai-image-tokens', size: '256x256', response_format: 'b64_json' })
        .withResponse();
      expect(data.usage).toEqual(FAKE_IMAGE_USAGE);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'images.generations', credits: tokenCredits, input_tokens: 330, output_tokens: 1040 });
    });

    it('the reservation bounds the output tokens: an account with less than n × max_output_tokens at the output price is refused before the upstream', async () => {
      // 2 × 4160 tokens × 40 credits per million = 0.3328 credits reserved for the output alone.
      const poor = createAccount('pro', '0.3');
      const refused = await openaiClient(poor.masterKey)
        .images.edit({ image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }), prompt: 'p', model: 'fake-openai-image-tokens', n: 2 })
        .catch((error) => error);
      expect(refused.status).toBe(402);
      const served = await openaiClient(poor.masterKey).images.edit({
        image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }),
        prompt: 'p',
        model: 'fake-openai-image-tokens',
        response_format: 'b64_json',
      });
      expect(served.usage).toEqual(FAKE_IMAGE_USAGE);
    });
  });

  it('an upstream error maps like other routes (its 400 passed through, a 500 as 502), charging nothing', async () => {
    const edit = async (model: string) =>
      openai.images
        .edit({ image: await toFile(png(2, 2, [0, 0, 0]), 'in.png', { type: 'image/png' }), prompt: 'p', model, response_format: 'b64_json' })
        .catch((error) => error);
    const rejected = await edit('reject-400-image');
    expect(rejected).toBeInstanceOf(OpenAI.BadRequestError);
    expect(rejected.error.message).toBe(REJECT_400_MESSAGE);
    const broken = await edit('broken-image');
    expect(broken.status).toBe(502);
    expect(broken.error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
    for (const refused of [rejected, broken]) {
      expect(await ledgerRow(refused.headers.get('x-request-id'))).toMatchObject({ route: 'images.edits', status: 'error', credits: decimal(0) });
    }
  });

  it('a 60 MB image is a 413 while it is read, and the upstream never sees it', async () => {
    const big = Buffer.alloc(60 * 1000 * 1000);
    png(1, 1, [0, 0, 0]).copy(big);
    const name = `${marker('big')}.png`;
    const file = await toFile(big, name, { type: 'image/png' });
    const started = Date.now();
    const refused = await openai.images.edit({ image: file, prompt: 'p', model: 'fake-openai-image' }).catch((error) => error);
    expect(refused.status).toBe(413);
    expect(refused.error).toMatchObject({ code: 'request_too_large' });
    // Quiet, this takes well under 2 s (the SDK encoding the 60 MB included); the bound is loose
    // because CI also runs with the machine busy, and a timed assertion must not make it flaky.
    expect(Date.now() - started).toBeLessThan(15_000);
    const reached = (await fakeRequests('openai')).filter((request) => (request.body as MultipartSummary | undefined)?.files?.image?.filename === name);
    expect(reached).toEqual([]);
  });

  describe('bad input is a 400 naming the field', () => {
    async function post(fields: [string, string | Blob, string?][]): Promise<{ status: number; body: any }> {
      const form = new FormData();
      for (const [name, value, filename] of fields) {
        if (typeof value === 'string') form.append(name, value);
        else form.append(name, value, filename ?? 'in.png');
      }
      const response = await fetch(`${suiteInfo().edgeA}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.masterKey}` },
        body: form,
      });
      return { status: response.status, body: await response.json() };
    }
    const image = (): Blob => new Blob([png(2, 2, [0, 0, 0])], { type: 'image/png' });

    it.each([
      [
        'no image',
        [
          ['prompt', 'p'],
          ['model', 'sim-image'],
        ],
        'image',
      ],
      [
        'an image that is a GIF',
        [
          ['image', new Blob([Buffer.from('GIF89a.....')], { type: 'image/gif' })],
          ['prompt', 'p'],
          ['model', 'sim-image'],
        ],
        'image',
      ],
      [
        'an unreadable image',
        [
          ['image', new Blob(['not an image at all'], { type: 'image/png' })],
          ['prompt', 'p'],
          ['model', 'sim-image'],
        ],
        'image',
      ],
      [
        'an unreadable second image',
        [
          ['image[]', image()],
          ['image[]', new Blob(['nope'])],
          ['prompt', 'p'],
          ['model', 'sim-image'],
        ],
        'image',
      ],
      [
        'a mask that is a JPEG',
        [
          ['image', image()],
          ['mask', new Blob([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0])], { type: 'image/jpeg' })],
          ['prompt', 'p'],
          ['model', 'sim-image'],
        ],
        'mask',
      ],
      [
        'no prompt',
        [
          ['image', image()],
          ['model', 'sim-image'],
        ],
        'prompt',
      ],
      [
        'n that is no number',
        [
          ['image', image()],
          ['prompt', 'p'],
          ['model', 'sim-image'],
          ['n', 'two'],
        ],
        'n',
      ],
      [
        'stream: true',
        [
          ['image', image()],
          ['prompt', 'p'],
          ['model', 'sim-image'],
          ['stream', 'true'],
        ],
        'stream',
      ],
      [
        'a model that does not edit images',
        [
          ['image', image()],
          ['prompt', 'p'],
          ['model', 'sim-chat'],
        ],
        'model',
      ],
    ] as const)('%s', async (_case, fields, param) => {
      const response = await post(fields as unknown as [string, string | Blob][]);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    });
  });
});
