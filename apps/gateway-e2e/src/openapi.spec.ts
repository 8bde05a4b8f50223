/**
 * The API reference as a client sees it: `GET /v1/openapi.json` and `GET /docs` from the running
 * edge, checked against the routes that edge registered (it logs them at startup) and against what
 * the routes really answer.
 */
import { clientFormat } from '@gateway/client-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, createAccount, createProxyKey, TestAccount } from './support/api';
import { OpenApiDocument, operation, propertyNames, requestSchema, resolve, responseSchema, schemaProblems } from './support/openapi';
import { suiteInfo } from './support/suite-info';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

let document: OpenApiDocument;

function operations(): { method: string; path: string; spec: Record<string, any> }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method: method.toUpperCase(), path, spec: item[method] })),
  );
}

/** The routes edge A registered, from the line it logs once it listens. */
function loggedRoutes(): string[] {
  // eslint-disable-next-line no-control-regex
  const log = readFileSync(join(suiteInfo().logDir, 'edge-a.log'), 'utf8').replace(/\u001b\[[0-9;]*m/g, '');
  const match = /API routes: ([^"\n]*)/.exec(log);
  if (!match) throw new Error('edge-a did not log its API routes');
  return match[1].split(', ').filter(Boolean);
}

const callUrl = (path: string) => path.replace(/\{[^}]+\}/g, 'ek-proxy-not-a-real-key');
const messageOf = (body: any): string => body?.detail ?? body?.error?.message ?? '';

/** A response checked against the schema the document gives for its route and status. */
function expectDocumented(method: string, path: string, response: { status: number; body: unknown }): void {
  const schema = responseSchema(document, method, path, response.status);
  expect({ route: `${method} ${path} → ${response.status}`, problems: schemaProblems(document, response.body, schema) }).toEqual({
    route: `${method} ${path} → ${response.status}`,
    problems: [],
  });
}

beforeAll(async () => {
  const response = await api('GET', '/v1/openapi.json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  document = response.body;
});

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document, served without a key', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      'x-api-key': expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
    });
  });

  it('describes exactly the API routes the running edge registered', () => {
    // Parameter names may differ (Fastify's `*` is logged as {wildcard}, documented as {path}).
    const unnamed = (route: string) => route.replace(/\{[^}]*\}/g, '{}');
    const logged = loggedRoutes().map(unnamed);
    expect(logged).toContain('POST /v1/chat/completions');
    const documented = operations().map(({ method, path }) => unnamed(`${method} ${path}`));
    expect(documented.filter((route) => !logged.includes(route))).toEqual([]);
    expect(logged.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it('marks the legacy proxy-key forms deprecated', () => {
    for (const [method, path] of [
      ['GET', '/v1/auth/proxy/'],
      ['GET', '/v1/auth/proxy/{proxy_key}'],
      ['POST', '/v1/auth/proxy/toggle/{proxy_key}'],
      ['POST', '/v1/auth/proxy/update/{proxy_key}'],
      ['DELETE', '/v1/auth/proxy/delete/{proxy_key}'],
    ]) {
      expect({ route: `${method} ${path}`, deprecated: operation(document, method, path).deprecated }).toEqual({
        route: `${method} ${path}`,
        deprecated: true,
      });
    }
    expect(operation(document, 'POST', '/v1/auth/proxy/toggle').deprecated).toBeUndefined();
  });

  it("says truly which routes need a key and where x-api-key is read, with each family's 401 body", async () => {
    const inherited = document.security;
    for (const { method, path, spec } of operations()) {
      const security: Record<string, string[]>[] = spec.security ?? inherited;
      const route = `${method} ${path}`;
      const body = spec.requestBody ? {} : undefined;
      const anonymous = await api(method, callUrl(path), { body });
      if (security.length === 0) {
        expect({ route, refused: anonymous.status === 401 }).toEqual({ route, refused: false });
        continue;
      }
      expect({ route, status: anonymous.status }).toEqual({ route, status: 401 });
      expectDocumented(method, path, anonymous);
      // An unknown key sent as x-api-key is read (and refused) only where the document says so.
      const viaHeader = await api(method, callUrl(path), { body, headers: { 'x-api-key': 'ek-unknown-key-for-the-reference-test' } });
      const readsXApiKey = security.some((requirement) => 'x-api-key' in requirement);
      expect({ route, message: messageOf(viaHeader.body) }).toEqual({
        route,
        message: readsXApiKey ? 'Invalid API key' : expect.stringMatching(/^Missing API key/),
      });
    }
  });

  it("documents each text format's request body exactly as the validator that checks it", () => {
    const routes = { '/v1/chat/completions': 'chat', '/v1/responses': 'responses', '/v1/messages': 'messages' } as const;
    for (const [path, format] of Object.entries(routes)) {
      const documented = requestSchema(document, 'POST', path);
      expect({ path, documented }).toEqual({ path, documented: JSON.parse(JSON.stringify(clientFormat(format).requestSchema)) });
    }
  });

  it("spells the spec's field names as written", () => {
    const proxyKeyFields = 'name expires_at allocated_ammount spend_window model_whitelist ip_whitelist';
    // [method, path, request body or response status, the spec's fields]
    const expected: [string, string, 'request' | number, string][] = [
      ['POST', '/v1/auth/proxy/create', 'request', proxyKeyFields],
      ['POST', '/v1/auth/proxy/update', 'request', `proxy_key ${proxyKeyFields}`],
      ['POST', '/v1/auth/proxy/create', 201, 'name key expires_at allocated_ammount used_ammount is_active model_whitelist ip_whitelist created_at last_used'],
      ['POST', '/v1/auth/proxy/lookup', 200, 'user_id enabled_thinking used_ammount'],
      ['POST', '/v1/auth/proxy/validate', 200, 'valid message budgets'],
      ['POST', '/v1/auth/proxy/toggle', 200, 'message status'],
      ['GET', '/v1/auth/key/regen', 200, 'key'],
      ['GET', '/v1/user/me', 200, 'subscription credits usage history endpoints'],
      ['GET', '/v1/key', 200, 'type name masked_key plan is_active expires_at model_whitelist ip_whitelist budgets'],
      [
        'POST',
        '/v1/chat/completions',
        'request',
        'model messages stream max_tokens temperature top_p top_k frequency_penalty presence_penalty tools web_search thinking reasoning ' +
          'reasoning_content_compat',
      ],
      ['POST', '/v1/chat/completions', 200, 'id object created model choices usage'],
      [
        'POST',
        '/v1/responses',
        'request',
        'model input instructions max_output_tokens temperature top_p stream tools tool_choice web_search reasoning metadata',
      ],
      ['POST', '/v1/responses', 200, 'id object created_at status model output usage'],
      [
        'POST',
        '/v1/messages',
        'request',
        'model messages max_tokens system thinking tools temperature top_p top_k stream metadata betas context_management output_config',
      ],
      ['POST', '/v1/messages', 200, 'id type role content model stop_reason stop_sequence usage'],
      ['POST', '/v1/systemone', 'request', 'model state questions'],
      ['POST', '/v1/systemone', 200, 'id object model answers usage'],
      ['POST', '/v1/embeddings', 'request', 'model input encoding_format dimensions'],
      ['POST', '/v1/embeddings', 200, 'object data model usage'],
      ['POST', '/v1/moderations', 'request', 'input model'],
      ['POST', '/v1/moderations', 200, 'id model results'],
      ['POST', '/v1/images/generations', 'request', 'prompt model n size quality style response_format public'],
      ['POST', '/v1/images/generations', 200, 'created data'],
      ['POST', '/v1/videos/generations', 'request', 'model prompt size'],
    ];
    for (const [method, path, part, fields] of expected) {
      const schema = part === 'request' ? requestSchema(document, method, path) : responseSchema(document, method, path, part);
      const route = `${method} ${path} (${part})`;
      expect({ route, fields: propertyNames(document, schema) }).toEqual({ route, fields: expect.arrayContaining(fields.split(' ')) });
    }

    const fieldsOf = (schema: Record<string, any>) => Object.keys(resolve(document, schema).properties);
    const questions = requestSchema(document, 'POST', '/v1/systemone').properties.questions;
    expect(fieldsOf(questions.additionalProperties)).toEqual(expect.arrayContaining(['type', 'instructions', 'criteria']));
    const answers = responseSchema(document, 'POST', '/v1/systemone', 200).properties.answers;
    expect(fieldsOf(answers.additionalProperties)).toEqual(
      expect.arrayContaining(['type', 'choice', 'score', 'legend', 'probabilities', 'noul', 'confidence']),
    );
    const model = responseSchema(document, 'GET', '/v1/models', 200).properties.data.items;
    expect(fieldsOf(model)).toEqual(
      expect.arrayContaining(
        'id object name description owned_by created tokens pricing endpoints premium_model voices sizes qualities tags styles metadata'.split(' '),
      ),
    );
    const embeddings = responseSchema(document, 'POST', '/v1/embeddings', 200).properties;
    expect(fieldsOf(embeddings.data.items)).toEqual(expect.arrayContaining(['object', 'embedding', 'index']));
    expect(fieldsOf(embeddings.usage)).toEqual(expect.arrayContaining(['prompt_tokens', 'total_tokens']));
    const verdict = responseSchema(document, 'POST', '/v1/moderations', 200).properties.results.items;
    expect(fieldsOf(verdict)).toEqual(expect.arrayContaining(['flagged', 'categories', 'category_scores']));
    const categories =
      'sexual hate harassment self-harm sexual/minors hate/threatening violence/graphic self-harm/intent self-harm/instructions harassment/threatening violence';
    for (const map of ['categories', 'category_scores']) {
      const keys = fieldsOf(resolve(document, verdict).properties[map]);
      expect({ map, keys: keys.sort() }).toEqual({ map, keys: categories.split(' ').sort() });
    }
    const image = responseSchema(document, 'POST', '/v1/images/generations', 200).properties.data.items;
    expect(fieldsOf(image)).toEqual(expect.arrayContaining(['url', 'b64_json', 'revised_prompt']));
    const logEntry = responseSchema(document, 'GET', '/v1/user/logs', 200).items;
    expect(fieldsOf(logEntry)).toEqual(expect.arrayContaining('key model route credits timestamp status ip input_tokens output_tokens'.split(' ')));
    const budget = responseSchema(document, 'GET', '/v1/key', 200).properties.budgets.items;
    expect(fieldsOf(budget)).toEqual('period timezone unit amount used remaining resets_at'.split(' '));
  });
});

describe('what the routes answer matches the document', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('proxy-key records, lists and refusals', async () => {
    const created = await api('POST', '/v1/auth/proxy/create', {
      key: account.masterKey,
      body: { name: 'reference', allocated_ammount: 2, spend_window: 'daily', ip_whitelist: ['127.0.0.0/8', '::1'] },
    });
    expect(created.status).toBe(201);
    expectDocumented('POST', '/v1/auth/proxy/create', created);
    expectDocumented('GET', '/v1/auth/proxy', await api('GET', '/v1/auth/proxy', { key: account.masterKey }));
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: account.masterKey, body: { proxy_key: created.body.key } });
    expect(lookup.status).toBe(200);
    expectDocumented('POST', '/v1/auth/proxy/lookup', lookup);
    const legacy = await api('GET', `/v1/auth/proxy/?proxy_key=${encodeURIComponent(created.body.key)}`, { key: account.masterKey });
    expect(legacy.status).toBe(200);
    expectDocumented('GET', '/v1/auth/proxy/', legacy);
    const toggled = await api('POST', '/v1/auth/proxy/toggle', { key: account.masterKey, body: { proxy_key: created.body.key } });
    expectDocumented('POST', '/v1/auth/proxy/toggle', toggled);
    const missing = await api('POST', '/v1/auth/proxy/remove', { key: account.masterKey, body: { proxy_key: 'ek-proxy-nope' } });
    expect(missing.status).toBe(404);
    expectDocumented('POST', '/v1/auth/proxy/remove', missing);
    const invalid = await api('POST', '/v1/auth/proxy/create', { key: account.masterKey, body: { name: 'x'.repeat(26), allocated_ammount: 1 } });
    expect(invalid.status).toBe(400);
    expectDocumented('POST', '/v1/auth/proxy/create', invalid);
    const proxy = await createProxyKey(account.masterKey);
    const validated = await api('POST', '/v1/auth/proxy/validate', { key: proxy.key, body: { model: 'sim-chat' } });
    expect(validated.status).toBe(200);
    expectDocumented('POST', '/v1/auth/proxy/validate', validated);
  });

  it('models, usage summary and logs', async () => {
    const models = await api('GET', '/v1/models', { key: account.masterKey });
    expect(models.status).toBe(200);
    expect(models.body.data.length).toBeGreaterThan(0);
    expectDocumented('GET', '/v1/models', models);
    expectDocumented('GET', '/v1/user/me', await api('GET', '/v1/user/me', { key: account.masterKey }));
    const ownKey = await api('GET', '/v1/key', { key: account.masterKey });
    expect(ownKey.status).toBe(200);
    expectDocumented('GET', '/v1/key', ownKey);
    const proxy = await createProxyKey(account.masterKey, { spend_window: 'weekly' });
    const proxyView = await api('GET', '/v1/key', { key: proxy.key });
    expect(proxyView.body.budgets).toHaveLength(1);
    expectDocumented('GET', '/v1/key', proxyView);
    const logs = await api('GET', '/v1/user/logs?limit=5', { key: account.masterKey });
    expect(logs.status).toBe(200);
    expectDocumented('GET', '/v1/user/logs', logs);
    const badQuery = await api('GET', '/v1/user/logs?limit=0', { key: account.masterKey });
    expect(badQuery.status).toBe(400);
    expectDocumented('GET', '/v1/user/logs', badQuery);
  });

  it('the three text-generation formats, and their error bodies', async () => {
    const messages = [{ role: 'user', content: 'Hello from the reference test' }];
    const chat = await api('POST', '/v1/chat/completions', { key: account.masterKey, body: { model: 'sim-chat', messages, max_tokens: 30 } });
    expect(chat.status).toBe(200);
    expectDocumented('POST', '/v1/chat/completions', chat);
    const responses = await api('POST', '/v1/responses', {
      key: account.masterKey,
      body: { model: 'sim-reasoner', input: 'Hello', max_output_tokens: 60 },
    });
    expect(responses.status).toBe(200);
    expectDocumented('POST', '/v1/responses', responses);
    const message = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: { model: 'sim-reasoner', messages, max_tokens: 60, thinking: { type: 'enabled', budget_tokens: 20 } },
    });
    expect(message.status).toBe(200);
    expectDocumented('POST', '/v1/messages', message);

    const badChat = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'robot' }] },
    });
    expect(badChat.status).toBe(400);
    expectDocumented('POST', '/v1/chat/completions', badChat);
    const unknownModel = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: { model: 'no-such-model', messages, max_tokens: 5 },
    });
    expect(unknownModel.status).toBe(404);
    expectDocumented('POST', '/v1/messages', unknownModel);
  });

  it('stored responses: read back, input items, delete, and 404', async () => {
    const created = await api('POST', '/v1/responses', { key: account.masterKey, body: { model: 'sim-chat', input: 'Keep this', max_output_tokens: 30 } });
    expect(created.status).toBe(200);
    const id: string = created.body.id;
    const retrieved = await api('GET', `/v1/responses/${id}`, { key: account.masterKey });
    expect(retrieved.status).toBe(200);
    expectDocumented('GET', '/v1/responses/{id}', retrieved);
    const items = await api('GET', `/v1/responses/${id}/input_items?limit=5`, { key: account.masterKey });
    expect(items.status).toBe(200);
    expectDocumented('GET', '/v1/responses/{id}/input_items', items);
    const badLimit = await api('GET', `/v1/responses/${id}/input_items?limit=0`, { key: account.masterKey });
    expect(badLimit.status).toBe(400);
    expectDocumented('GET', '/v1/responses/{id}/input_items', badLimit);
    const deleted = await api('DELETE', `/v1/responses/${id}`, { key: account.masterKey });
    expect(deleted.status).toBe(200);
    expectDocumented('DELETE', '/v1/responses/{id}', deleted);
    const gone = await api('GET', `/v1/responses/${id}`, { key: account.masterKey });
    expect(gone.status).toBe(404);
    expectDocumented('GET', '/v1/responses/{id}', gone);
  });

  it('decisions', async () => {
    const info = await api('GET', '/v1/decisions');
    expect(info.status).toBe(200);
    expectDocumented('GET', '/v1/decisions', info);
    const decision = await api('POST', '/v1/systemone', {
      key: account.masterKey,
      body: {
        state: 'The sky is blue.',
        questions: { sky: { type: 'choice', instructions: 'What colour is the sky?', criteria: { blue: 'blue', red: null } } },
      },
    });
    expect(decision.status).toBe(200);
    expectDocumented('POST', '/v1/systemone', decision);
    const invalid = await api('POST', '/v1/decisions', {
      key: account.masterKey,
      body: { state: 'x', questions: { q: { type: 'maybe', instructions: 'x' } } },
    });
    expect(invalid.status).toBe(400);
    expectDocumented('POST', '/v1/decisions', invalid);
  });

  it('embeddings, moderations and images, and their error bodies', async () => {
    const key = account.masterKey;
    const floats = await api('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: ['a lighthouse', 'at dusk'], dimensions: 8 },
    });
    expect(floats.status).toBe(200);
    expect(floats.body.data.map((item: { embedding: number[] }) => item.embedding.length)).toEqual([8, 8]);
    expectDocumented('POST', '/v1/embeddings', floats);
    const base64 = await api('POST', '/v1/embeddings', { key, body: { model: 'sim-embed', input: 'a lighthouse', encoding_format: 'base64' } });
    expect(base64.status).toBe(200);
    expect(typeof base64.body.data[0].embedding).toBe('string');
    expectDocumented('POST', '/v1/embeddings', base64);
    const unknownModel = await api('POST', '/v1/embeddings', { key, body: { model: 'no-such-model', input: 'x' } });
    expect(unknownModel.status).toBe(404);
    expectDocumented('POST', '/v1/embeddings', unknownModel);

    const moderation = await api('POST', '/v1/moderations', { key, body: { input: ['a calm sea', ''] } });
    expect(moderation.status).toBe(200);
    expect(moderation.body.results).toHaveLength(2);
    expectDocumented('POST', '/v1/moderations', moderation);
    const badModeration = await api('POST', '/v1/moderations', { key, body: { input: [], model: 'sim-moderation' } });
    expect(badModeration.status).toBe(400);
    expectDocumented('POST', '/v1/moderations', badModeration);

    const prompt = 'A lighthouse at dusk';
    const url = await api('POST', '/v1/images/generations', { key, body: { model: 'sim-image', prompt, size: '256x256' } });
    expect(url.status).toBe(200);
    expect(url.body.data[0].url).toEqual(expect.any(String));
    expectDocumented('POST', '/v1/images/generations', url);
    const inline = await api('POST', '/v1/images/generations', {
      key,
      body: { prompt, n: 2, size: '256x256', response_format: 'b64_json', public: false },
    });
    expect(inline.status).toBe(200);
    expect(inline.body.data.map((item: { b64_json?: string }) => typeof item.b64_json)).toEqual(['string', 'string']);
    expectDocumented('POST', '/v1/images/generations', inline);
    const badImage = await api('POST', '/v1/images/generations', { key, body: { prompt, size: '100x100' } });
    expect(badImage.status).toBe(400);
    expectDocumented('POST', '/v1/images/generations', badImage);
  });
});

describe('GET /docs', () => {
  it('is Swagger UI, loading every asset from the gateway', async () => {
    const page = await api('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const assets = [...page.text.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)=['"]([^'"]+)['"]/g)].map((match) => match[1]);
    expect(assets).toEqual(expect.arrayContaining([expect.stringMatching(/swagger-ui-bundle\.js$/)]));
    for (const asset of assets) {
      const url = new URL(asset, `${suiteInfo().edgeA}/docs`);
      expect(url.origin).toBe(suiteInfo().edgeA);
      const response = await fetch(url);
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      await response.arrayBuffer();
    }
  });
});
