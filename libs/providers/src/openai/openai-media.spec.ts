import { PNG } from 'pngjs';
import type { EmbeddingRequest, ImageRequest } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../testing/fake-upstream';
import { OpenAIAdapter } from './openai.adapter';

const floatsBase64 = (values: number[]) => {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
};

const png = (width: number, height: number) => PNG.sync.write(new PNG({ width, height }));

describe('OpenAIAdapter media endpoints', () => {
  let upstream: FakeUpstream;
  let adapter: OpenAIAdapter;
  let route: UpstreamRoute;
  const signal = () => new AbortController().signal;
  const embedding = (fields: Partial<EmbeddingRequest> = {}): EmbeddingRequest => ({
    model: 'public-embed',
    inputs: ['one', 'two'],
    dimensionsRequested: false,
    encoding: 'base64',
    ...fields,
  });
  const image = (fields: Partial<ImageRequest> = {}): ImageRequest => ({
    model: 'public-image',
    prompt: 'a red fox',
    n: 2,
    size: '256x256',
    quality: 'standard',
    style: 'vivid',
    explicit: { quality: false, style: false },
    ...fields,
  });

  beforeEach(async () => {
    upstream = await startFakeUpstream();
    adapter = new OpenAIAdapter();
    route = { adapter: 'openai', baseUrl: `${upstream.baseUrl}/v1`, upstreamModel: 'upstream-model', apiKey: 'sk-test' };
  });

  afterEach(async () => {
    await adapter.close();
    await upstream.close();
  });

  it('posts embeddings with the key and reads base64 or float vectors back in input order', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        object: 'list',
        data: [
          { object: 'embedding', index: 1, embedding: [0.5, -0.25] },
          { object: 'embedding', index: 0, embedding: floatsBase64([0.125, 1.5]) },
        ],
        usage: { prompt_tokens: 7, total_tokens: 7 },
      }),
    );
    const result = await adapter.embed(route, embedding({ dimensions: 2, dimensionsRequested: true, user: 'u1' }), signal());
    expect(result.vectors.map((vector) => Array.from(vector))).toEqual([
      [0.125, 1.5],
      [0.5, -0.25],
    ]);
    expect(result.inputTokens).toBe(7);
    const [sent] = upstream.requests;
    expect(sent.url).toBe('/v1/embeddings');
    expect(sent.headers['authorization']).toBe('Bearer sk-test');
    expect(sent.body).toEqual({ model: 'upstream-model', input: ['one', 'two'], encoding_format: 'base64', dimensions: 2, user: 'u1' });
  });

  it('sends no dimensions the client did not ask for, and counts tokens when the upstream reports none', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        data: [
          { index: 0, embedding: [1] },
          { index: 1, embedding: [1] },
        ],
      }),
    );
    const result = await adapter.embed(route, embedding({ dimensions: 1536, encoding: 'float' }), signal());
    expect(upstream.requests[0].body).toEqual({ model: 'upstream-model', input: ['one', 'two'], encoding_format: 'float' });
    expect(result.inputTokens).toBe(2);
  });

  it('refuses an embeddings answer with the wrong number of vectors (502, retryable)', async () => {
    upstream.handle((_request, response) => sendJson(response, 200, { data: [{ index: 0, embedding: [1] }] }));
    await expect(adapter.embed(route, embedding(), signal())).rejects.toMatchObject({ status: 502, retryable: true });
  });

  it("keeps the spec's 11 moderation categories of each result and the upstream id", async () => {
    const categories = { harassment: true, 'harassment/threatening': false, illicit: true, violence: false };
    const scores = { harassment: 0.91, 'harassment/threatening': 0.02, illicit: 0.7, violence: 0.01 };
    upstream.handle((_request, response) =>
      sendJson(response, 200, { id: 'modr-up', model: 'omni', results: [{ flagged: true, categories, category_scores: scores }] }),
    );
    const result = await adapter.moderate(route, { model: 'public-mod', inputs: ['you idiot'] }, signal());
    expect(upstream.requests[0].url).toBe('/v1/moderations');
    expect(upstream.requests[0].body).toEqual({ model: 'upstream-model', input: ['you idiot'] });
    expect(result.id).toBe('modr-up');
    const [verdict] = result.results;
    expect(Object.keys(verdict.categories)).toHaveLength(11);
    expect(verdict.categories).not.toHaveProperty('illicit');
    expect(verdict).toMatchObject({ flagged: true, categories: { harassment: true, sexual: false }, category_scores: { harassment: 0.91, sexual: 0 } });
  });

  it('asks for b64_json images and decodes them, sending quality and style only when the client set them', async () => {
    const bytes = png(4, 3);
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        created: 1,
        data: [{ b64_json: bytes.toString('base64'), revised_prompt: 'A red fox.' }, { b64_json: bytes.toString('base64') }],
      }),
    );
    const result = await adapter.generateImages(route, image({ explicit: { quality: true, style: false }, quality: 'hd' }), signal());
    expect(upstream.requests[0].url).toBe('/v1/images/generations');
    expect(upstream.requests[0].body).toEqual({
      model: 'upstream-model',
      prompt: 'a red fox',
      n: 2,
      size: '256x256',
      response_format: 'b64_json',
      quality: 'hd',
    });
    expect(result.images).toHaveLength(2);
    expect(result.images[0]).toEqual({ bytes, contentType: 'image/png', revisedPrompt: 'A red fox.' });
  });

  it("reads an image answer's token usage when its counts are whole, and none otherwise", async () => {
    const bytes = png(2, 2);
    const usage = { total_tokens: 30, input_tokens: 10, output_tokens: 20, input_tokens_details: { text_tokens: 4, image_tokens: 6 } };
    for (const [reported, expected] of [
      [usage, { inputTokens: 10, outputTokens: 20, raw: usage }],
      [{ input_tokens: 1.5, output_tokens: 2 }, undefined],
      [{ input_tokens: -1, output_tokens: 2 }, undefined],
      ['many', undefined],
    ] as const) {
      upstream.handle((_request, response) => sendJson(response, 200, { data: [{ b64_json: bytes.toString('base64') }], usage: reported }));
      expect((await adapter.generateImages(route, image({ n: 1 }), signal())).usage).toEqual(expected);
    }
  });

  it('downloads images an upstream returned by URL anyway', async () => {
    const bytes = png(2, 2);
    upstream.handle((request, response) => {
      if (request.method === 'GET') {
        response.writeHead(200, { 'content-type': 'image/png' });
        return void response.end(bytes);
      }
      sendJson(response, 200, { data: [{ url: `${upstream.baseUrl}/files/a.png` }] });
    });
    const result = await adapter.generateImages(route, image({ n: 1 }), signal());
    expect(result.images[0].bytes.equals(bytes)).toBe(true);
    expect(upstream.requests.map((request) => `${request.method} ${request.url}`)).toEqual(['POST /v1/images/generations', 'GET /files/a.png']);
  });

  it('refuses bytes that are not an image, and passes an upstream 400 through', async () => {
    upstream.handle((_request, response) => sendJson(response, 200, { data: [{ b64_json: Buffer.from('<html>').toString('base64') }] }));
    await expect(adapter.generateImages(route, image({ n: 1 }), signal())).rejects.toMatchObject({ status: 502 });
    upstream.handle((_request, response) => sendJson(response, 400, { error: { message: 'Your prompt was rejected', type: 'invalid_request_error' } }));
    const error = await adapter.generateImages(route, image(), signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, retryable: false, message: 'Your prompt was rejected' });
  });
});
