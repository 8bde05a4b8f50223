/**
 * `POST /v1/images/generations` through the official `openai` client: `b64_json` returns the PNG
 * itself; `url` returns a gateway URL into the object store, plain for `public: true`, signed and
 * expiring otherwise.
 */
import type { ImageGenerateParamsNonStreaming, ImagesResponse } from 'openai/resources/images';
import { PNG } from 'pngjs';
import { api, createAccount, nowSeconds, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_REVISED_PREFIX } from '../support/fake-openai-media';
import { suiteInfo } from '../support/suite-info';

/** The spec's `public` field is not in the SDK's types; the SDK sends unknown fields as they are. */
type GatewayImageParams = ImageGenerateParamsNonStreaming & { public?: boolean };

/** Where the gateway serves stored images (URLs start with PUBLIC_BASE_URL, by default http://localhost:<port>/v1). */
const GATEWAY_FILE = /^\/v1\/files\/images\/[0-9a-f-]{36}\.png$/;

const decodePng = (bytes: Buffer) => {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height };
};

async function download(url: string): Promise<{ status: number; type: string | null; cache: string | null; bytes: Buffer }> {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cache: response.headers.get('cache-control'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

describe('POST /v1/images/generations', () => {
  let account: TestAccount;
  const generate = (params: GatewayImageParams): Promise<ImagesResponse> => openaiClient(account.masterKey).images.generate(params);

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it.each([
    ['512x512', 512, 512],
    ['1792x1024', 1792, 1024],
  ] as const)('b64_json returns PNGs of the requested size (%s)', async (size, width, height) => {
    const result = await generate({ model: 'sim-image', prompt: 'a lighthouse at dusk', n: 2, size, response_format: 'b64_json' });
    expect(result.created).toBeGreaterThanOrEqual(nowSeconds() - 60);
    expect(result.data).toHaveLength(2);
    for (const image of result.data!) {
      expect(image.url).toBeUndefined();
      expect(image.revised_prompt).toBe('a lighthouse at dusk');
      expect(decodePng(Buffer.from(image.b64_json!, 'base64'))).toEqual({ width, height });
    }
    expect(result.data![0].b64_json).not.toBe(result.data![1].b64_json);
  });

  it('url with public: true works without a key, from any edge', async () => {
    const result = await generate({ model: 'sim-image', prompt: 'a public painting', size: '256x256', response_format: 'url', public: true });
    const [image] = result.data!;
    expect(image.b64_json).toBeUndefined();
    const url = new URL(image.url!);
    expect(url.port).toBe(String(suiteInfo().edgeAPort));
    expect(url.pathname).toMatch(GATEWAY_FILE);
    expect(url.search).toBe('');
    const fetched = await download(image.url!);
    expect(fetched).toMatchObject({ status: 200, type: 'image/png', cache: expect.stringContaining('public') });
    expect(decodePng(fetched.bytes)).toEqual({ width: 256, height: 256 });
    url.port = new URL(suiteInfo().edgeB).port;
    expect((await download(url.toString())).status).toBe(200);
  });

  it('url is private by default: its signed URL works for an hour, without a valid signature it is 403', async () => {
    const before = nowSeconds();
    const result = await generate({ model: 'sim-image', prompt: 'a private sketch', size: '256x256' });
    const signed = new URL(result.data![0].url!);
    const expires = Number(signed.searchParams.get('expires'));
    expect(expires).toBeGreaterThanOrEqual(before + 3600);
    expect(expires).toBeLessThanOrEqual(nowSeconds() + 3600);
    expect(signed.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const fetched = await download(signed.toString());
    expect(fetched).toMatchObject({ status: 200, type: 'image/png', cache: 'private, no-store' });
    expect(decodePng(fetched.bytes)).toEqual({ width: 256, height: 256 });

    const unsigned = await fetch(`${signed.origin}${signed.pathname}`);
    expect(unsigned.status).toBe(403);
    expect(((await unsigned.json()) as { error: { message: string } }).error.message).toMatch(/signature/);
    const tampered = new URL(signed);
    tampered.searchParams.set('expires', String(expires + 3600));
    expect((await fetch(tampered)).status).toBe(403);
  });

  it("defaults to n 1, 1024x1024 and the catalog's first image model", async () => {
    const response = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { prompt: 'defaults please', response_format: 'b64_json' } });
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(1);
    expect(decodePng(Buffer.from(response.body.data[0].b64_json, 'base64'))).toEqual({ width: 1024, height: 1024 });
  });

  it("refuses n above the model's maximum and a size the model does not offer, naming the field", async () => {
    const overMax = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'fake-openai-image', prompt: 'x', n: 3 } });
    expect(overMax.status).toBe(400);
    expect(overMax.body.error).toMatchObject({ type: 'invalid_request_error', param: 'n', message: 'n must be at most 2 for fake-openai-image' });
    const overSpec = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'sim-image', prompt: 'x', n: 11 } });
    expect(overSpec.status).toBe(400);
    expect(overSpec.body.error).toMatchObject({ param: 'n' });
    const size = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'fake-openai-image', prompt: 'x', size: '1792x1024' } });
    expect(size.status).toBe(400);
    expect(size.body.error).toMatchObject({ param: 'size', message: expect.stringContaining('256x256, 512x512, 1024x1024') });
    const style = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'fake-openai-image', prompt: 'x', style: 'natural' } });
    expect(style.status).toBe(200);
  });

  it('relays an OpenAI-compatible upstream in both formats, always fetching b64_json and serving URLs itself', async () => {
    const mk = marker('paint');
    const inline = await generate({ model: 'fake-openai-image', prompt: `inline ${mk}`, n: 2, size: '256x256', quality: 'hd', response_format: 'b64_json' });
    expect(inline.data!.map((image) => decodePng(Buffer.from(image.b64_json!, 'base64')))).toEqual([
      { width: 256, height: 256 },
      { width: 256, height: 256 },
    ]);
    expect(inline.data![0].revised_prompt).toBe(`${FAKE_REVISED_PREFIX}inline ${mk}`);

    const linked = await generate({ model: 'fake-openai-image', prompt: `linked ${mk}`, size: '512x512', response_format: 'url', public: true });
    expect(new URL(linked.data![0].url!).pathname).toMatch(GATEWAY_FILE);
    expect(decodePng((await download(linked.data![0].url!)).bytes)).toEqual({ width: 512, height: 512 });

    // This upstream answers URLs whatever it is asked: the router downloads the image and stores it.
    const relinked = await generate({ model: 'fake-openai-image-url', prompt: `relinked ${mk}`, size: '256x256', response_format: 'url' });
    const url = relinked.data![0].url!;
    expect(new URL(url).port).toBe(String(suiteInfo().edgeAPort));
    expect(new URL(url).pathname).toMatch(GATEWAY_FILE);
    expect(decodePng((await download(url)).bytes)).toEqual({ width: 256, height: 256 });

    const sent = await fakeRequestsMentioning('openai', mk);
    const posts = sent.filter((request) => request.path === '/v1/images/generations');
    expect(posts.map((request) => request.body)).toEqual([
      { model: 'painter', prompt: `inline ${mk}`, n: 2, size: '256x256', quality: 'hd', response_format: 'b64_json' },
      { model: 'painter', prompt: `linked ${mk}`, n: 1, size: '512x512', response_format: 'b64_json' },
      { model: 'painter-url', prompt: `relinked ${mk}`, n: 1, size: '256x256', response_format: 'b64_json' },
    ]);
  });

  it('passes an upstream 400 through with its message, and reports a failing upstream as 502', async () => {
    const rejected = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'reject-400-image', prompt: 'x' } });
    expect(rejected.status).toBe(400);
    expect(rejected.body.error.message).toMatch(/this prompt is not allowed/);
    const broken = await api('POST', '/v1/images/generations', { key: account.masterKey, body: { model: 'broken-image', prompt: 'x' } });
    expect(broken.status).toBe(502);
    expect(broken.body).toMatchObject({ error: { type: 'server_error', code: 'upstream_error' }, request_id: expect.any(String) });
  });
});
