/**
 * `POST /v1/embeddings` through the official `openai` client: its default request (base64, decoded
 * by the SDK) and an explicit `float` request give the same vectors, from the simulator and from
 * an OpenAI-compatible upstream.
 */
import { countTextTokens } from '@gateway/platform';
import { api, createAccount, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_EMBED_DEFAULT_DIMENSIONS, fakeEmbedding } from '../support/fake-openai-media';
import { FAKE_OPENAI_KEY } from '../support/fake-upstreams';

const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

function decodeFloat32LE(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

describe('POST /v1/embeddings', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('gives the same vectors with the SDK default (base64) as with float, one per input with its index', async () => {
    const client = openaiClient(account.masterKey);
    const input = ['The quick brown fox', 'jumps over the lazy dog', 'ünïcödé and emoji 🦊'];
    const viaDefault = await client.embeddings.create({ model: 'sim-embed', input });
    const viaFloat = await client.embeddings.create({ model: 'sim-embed', input, encoding_format: 'float' });
    expect(viaFloat.object).toBe('list');
    expect(viaFloat.model).toBe('sim-embed');
    expect(viaFloat.data.map((item) => [item.object, item.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
      ['embedding', 2],
    ]);
    for (const [index, item] of viaFloat.data.entries()) {
      expect(item.embedding).toHaveLength(1536);
      expect(Math.abs(norm(item.embedding) - 1)).toBeLessThan(1e-5);
      expect(viaDefault.data[index].embedding).toEqual(item.embedding);
    }
    const tokens = input.reduce((sum, text) => sum + countTextTokens(text), 0);
    expect(viaFloat.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(viaDefault.usage).toEqual(viaFloat.usage);
  });

  it('answers base64 as little-endian float32 bytes over plain HTTP, and a string input as one item', async () => {
    const body = { model: 'sim-embed', input: 'a single string', dimensions: 16 };
    const asBase64 = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { ...body, encoding_format: 'base64' } });
    const asFloat = await api('POST', '/v1/embeddings', { key: account.masterKey, body });
    expect(asBase64.status).toBe(200);
    expect(asFloat.status).toBe(200);
    expect(asBase64.body.data).toHaveLength(1);
    expect(typeof asBase64.body.data[0].embedding).toBe('string');
    expect(decodeFloat32LE(asBase64.body.data[0].embedding)).toEqual(asFloat.body.data[0].embedding);
  });

  it('respects dimensions up to the model maximum, deterministically', async () => {
    const client = openaiClient(account.masterKey);
    const first = await client.embeddings.create({ model: 'sim-embed', input: 'size me', dimensions: 256 });
    const again = await client.embeddings.create({ model: 'sim-embed', input: 'size me', dimensions: 256, encoding_format: 'float' });
    expect(first.data[0].embedding).toHaveLength(256);
    expect(Math.abs(norm(first.data[0].embedding) - 1)).toBeLessThan(1e-5);
    expect(again.data[0].embedding).toEqual(first.data[0].embedding);
    expect((await client.embeddings.create({ model: 'sim-embed', input: 'x', dimensions: 3072 })).data[0].embedding).toHaveLength(3072);
    const tooMany = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'sim-embed', input: 'x', dimensions: 3073 } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ type: 'invalid_request_error', param: 'dimensions', message: expect.stringContaining('3072') });
  });

  it('calls an OpenAI-compatible upstream with its key and passes the encoding and asked-for dimensions on', async () => {
    const client = openaiClient(account.masterKey);
    const mk = marker('embed');
    const input = [`first ${mk}`, `second ${mk}`];
    const viaDefault = await client.embeddings.create({ model: 'fake-openai-embed', input });
    const viaFloat = await client.embeddings.create({ model: 'fake-openai-embed', input, encoding_format: 'float', dimensions: 12 });
    expect(viaDefault.model).toBe('fake-openai-embed');
    expect(viaDefault.data.map((item) => item.embedding)).toEqual(input.map((text) => fakeEmbedding(text, FAKE_EMBED_DEFAULT_DIMENSIONS)));
    expect(viaFloat.data.map((item) => item.embedding)).toEqual(input.map((text) => fakeEmbedding(text, 12)));
    expect(viaDefault.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const sent = await fakeRequestsMentioning('openai', mk);
    expect(sent.map((request) => [request.path, request.headers.authorization])).toEqual([
      ['/v1/embeddings', `Bearer ${FAKE_OPENAI_KEY}`],
      ['/v1/embeddings', `Bearer ${FAKE_OPENAI_KEY}`],
    ]);
    expect(sent[0].body).toEqual({ model: 'embed', input, encoding_format: 'base64' });
    expect(sent[1].body).toEqual({ model: 'embed', input, encoding_format: 'float', dimensions: 12 });
  });

  it('falls back to the next route when the upstream fails with 500', async () => {
    const response = await openaiClient(account.masterKey).embeddings.create({ model: 'fallback-embed', input: 'still here', encoding_format: 'float' });
    expect(response.model).toBe('fallback-embed');
    expect(response.data[0].embedding).toHaveLength(1536);
  });

  it('refuses a model that does not serve embeddings (400, naming its endpoints) and an unknown one (404)', async () => {
    const chat = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'sim-chat', input: 'x' } });
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ param: 'model', message: expect.stringContaining('chat.completions') });
    const unknown = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'no-such-embedder', input: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ param: 'model' });
  });

  it("counts a long input exactly against the model's limit: 10,008 characters of English (under 2,500 tokens) fit sim-embed's 8,192", async () => {
    const english = 'Embeddings map text to vectors, and similar texts land close together. '.repeat(150).slice(0, 10_008);
    const fits = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'sim-embed', input: english } });
    expect(fits.status).toBe(200);
    expect(fits.body.usage.prompt_tokens).toBeLessThan(2500);
    const tooLong = await api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'sim-embed', input: ['short', english.repeat(6)] } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'input',
      message: 'input.1 is longer than the 8192 tokens sim-embed takes per input',
    });
  });
});
