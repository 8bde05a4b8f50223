/**
 * Bad inputs on the media routes: each is a 4xx in OpenAI's error shape with `param` naming the
 * field and the message mentioning it. None may be a 500.
 */
import { api, createAccount, TestAccount } from '../support/api';

type Route = '/v1/embeddings' | '/v1/moderations' | '/v1/images/generations';

interface Case {
  name: string;
  body?: unknown;
  rawBody?: string;
  /** The field `param` (and the message) must name; absent for bodies that are not objects. */
  field?: string;
  status?: number;
}

const valid: Record<Route, Record<string, unknown>> = {
  '/v1/embeddings': { model: 'sim-embed', input: 'Hello' },
  '/v1/moderations': { input: 'Hello' },
  '/v1/images/generations': { prompt: 'A cat', size: '256x256', response_format: 'b64_json' },
};

function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...body };
  delete copy[field];
  return copy;
}

const words = (count: number) => 'word '.repeat(count);

function casesFor(route: Route): Case[] {
  const base = valid[route];
  const generic: Case[] = [
    { name: 'not JSON', rawBody: '{"input": ' },
    { name: 'JSON array', rawBody: '[1,2]' },
    { name: 'JSON string', rawBody: '"hello"' },
    { name: '__proto__ key', rawBody: '{"__proto__": {"admin": true}, "input": "x"}' },
    { name: 'model is a number', body: { ...base, model: 42 }, field: 'model' },
    { name: 'model is empty', body: { ...base, model: '' }, field: 'model' },
    { name: 'model unknown', body: { ...base, model: 'no-such-model' }, field: 'model', status: 404 },
    { name: 'model of another endpoint', body: { ...base, model: 'sim-chat' }, field: 'model' },
    { name: 'the decision model', body: { ...base, model: 'jev' }, field: 'model' },
  ];
  switch (route) {
    case '/v1/embeddings':
      return [
        ...generic,
        { name: 'empty body', rawBody: '', field: 'model' },
        { name: 'missing model', body: without(base, 'model'), field: 'model' },
        { name: 'missing input', body: without(base, 'input'), field: 'input' },
        { name: 'input is a number', body: { ...base, input: 5 }, field: 'input' },
        { name: 'input is empty', body: { ...base, input: '' }, field: 'input' },
        { name: 'input array empty', body: { ...base, input: [] }, field: 'input' },
        { name: 'input item not a string', body: { ...base, input: ['a', { text: 'b' }] }, field: 'input' },
        { name: 'input of token ids', body: { ...base, input: [1, 2, 3] }, field: 'input' },
        { name: 'input over 2048 items', body: { ...base, input: Array.from({ length: 2049 }, () => 'x') }, field: 'input' },
        { name: "input over the model's tokens", body: { ...base, input: ['short', words(9000)] }, field: 'input' },
        { name: 'request over 1 MB', body: { ...base, input: Array.from({ length: 3 }, () => words(80_000)) }, field: 'input' },
        { name: 'unknown encoding_format', body: { ...base, encoding_format: 'int8' }, field: 'encoding_format' },
        { name: 'dimensions zero', body: { ...base, dimensions: 0 }, field: 'dimensions' },
        { name: 'dimensions fractional', body: { ...base, dimensions: 2.5 }, field: 'dimensions' },
        { name: 'dimensions a string', body: { ...base, dimensions: '64' }, field: 'dimensions' },
        { name: 'dimensions over the model maximum', body: { ...base, dimensions: 4096 }, field: 'dimensions' },
      ];
    case '/v1/moderations':
      return [
        ...generic,
        { name: 'empty body', rawBody: '', field: 'input' },
        { name: 'missing input', body: without(base, 'input'), field: 'input' },
        { name: 'input is an object', body: { ...base, input: { text: 'x' } }, field: 'input' },
        { name: 'input array empty', body: { ...base, input: [] }, field: 'input' },
        { name: 'input item null', body: { ...base, input: ['a', null] }, field: 'input' },
        { name: 'input over 100 items', body: { ...base, input: Array.from({ length: 101 }, () => 'x') }, field: 'input' },
        { name: 'input item too long', body: { ...base, input: ['x'.repeat(100_001)] }, field: 'input' },
      ];
    case '/v1/images/generations':
      return [
        ...generic,
        { name: 'empty body', rawBody: '', field: 'prompt' },
        { name: 'missing prompt', body: without(base, 'prompt'), field: 'prompt' },
        { name: 'prompt empty', body: { ...base, prompt: '' }, field: 'prompt' },
        { name: 'prompt is a number', body: { ...base, prompt: 7 }, field: 'prompt' },
        { name: 'prompt too long', body: { ...base, prompt: 'x'.repeat(4001) }, field: 'prompt' },
        { name: 'n zero', body: { ...base, n: 0 }, field: 'n' },
        { name: 'n eleven', body: { ...base, n: 11 }, field: 'n' },
        { name: 'n fractional', body: { ...base, n: 1.5 }, field: 'n' },
        { name: 'n a string', body: { ...base, n: '2' }, field: 'n' },
        { name: 'n over the model maximum', body: { ...base, model: 'fake-openai-image-url', n: 2 }, field: 'n' },
        { name: 'unknown size', body: { ...base, size: '300x300' }, field: 'size' },
        { name: 'size the model does not offer', body: { ...base, model: 'fake-openai-image', size: '1024x1792' }, field: 'size' },
        { name: 'unknown quality', body: { ...base, quality: 'ultra' }, field: 'quality' },
        { name: 'unknown style', body: { ...base, style: 'baroque' }, field: 'style' },
        { name: 'unknown response_format', body: { ...base, response_format: 'jpeg' }, field: 'response_format' },
        { name: 'public not a boolean', body: { ...base, public: 'yes' }, field: 'public' },
        // The SDK's images.generate({stream: true}) reads server-sent events: a whole JSON answer would break it.
        { name: 'stream true', body: { ...base, stream: true, partial_images: 2 }, field: 'stream' },
        { name: 'stream not a boolean', body: { ...base, stream: 'yes' }, field: 'stream' },
      ];
  }
}

describe('bad inputs on the media routes', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  for (const route of Object.keys(valid) as Route[]) {
    describe(route, () => {
      it('accepts the valid body the cases are derived from', async () => {
        const response = await api('POST', route, { key: account.masterKey, body: valid[route] });
        expect(response.status).toBe(200);
      });

      it.each(casesFor(route).map((testCase) => [testCase.name, testCase] as const))('%s → 4xx naming the field', async (_name, testCase) => {
        const response = await api('POST', route, {
          key: account.masterKey,
          ...(testCase.rawBody !== undefined ? { rawBody: testCase.rawBody, headers: { 'content-type': 'application/json' } } : { body: testCase.body }),
        });
        const context = `${route} / ${testCase.name}: ${response.status} ${response.text.slice(0, 300)}`;
        expect({ context, status: response.status }).toEqual({ context, status: testCase.status ?? 400 });
        const error = response.body?.error ?? {};
        expect({ context, keys: Object.keys(response.body ?? {}), errorKeys: Object.keys(error).sort() }).toEqual({
          context,
          keys: ['error'],
          errorKeys: ['code', 'message', 'param', 'type'],
        });
        expect({ context, type: error.type, param: error.param }).toEqual({
          context,
          type: testCase.status === 404 ? 'not_found_error' : 'invalid_request_error',
          param: testCase.field ?? null,
        });
        if (testCase.field) expect({ context, names: error.message.includes(testCase.field) }).toEqual({ context, names: true });
      });
    });
  }

  it('an input larger than one NATS message (1 MiB) is a 400 naming input, not a 500', async () => {
    const response = await api('POST', '/v1/embeddings', {
      key: account.masterKey,
      body: { model: 'sim-embed', input: Array.from({ length: 300 }, () => 'word '.repeat(1000)) },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
  });
});
