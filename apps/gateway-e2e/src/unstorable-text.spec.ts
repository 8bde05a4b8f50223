/**
 * Text PostgreSQL cannot store — a NUL (U+0000) or a lone UTF-16 surrogate, written in JSON as
 * `\u0000` / `\ud800` or in a URL as `%00` — never reaches a usage event, a key record, a stored
 * response or a log: every route refuses it with a 400 in its own error format, naming the field.
 * (Before, `{"model":"a\u0000b"}` was answered 404 and its usage event could never be written, and
 * a NUL in a proxy-key name or a path was a 500.)
 */
import { api, createAccount, createProxyKey, TestAccount } from './support/api';

type Format = 'openai' | 'anthropic' | 'detail';

const NUL = '\\u0000';
const LONE = '\\ud800';

/** A body of the route with `marker` spliced into the string at `field` (the raw JSON escape stays an escape). */
interface BodyCase {
  route: string;
  format: Format;
  body: Record<string, unknown>;
  /** The field the marker is written into, as `param` names it. */
  field: string;
}

const user = (content: string) => [{ role: 'user', content }];

function bodyCases(proxyKey: string): BodyCase[] {
  return [
    { route: '/v1/chat/completions', format: 'openai', body: { model: 'sim-chat', messages: user('@') }, field: 'messages.0.content' },
    { route: '/v1/chat/completions', format: 'openai', body: { model: '@', messages: user('hi') }, field: 'model' },
    { route: '/v1/responses', format: 'openai', body: { model: 'sim-chat', input: '@' }, field: 'input' },
    { route: '/v1/responses', format: 'openai', body: { model: 'sim-chat', input: 'hi', metadata: { tag: '@' } }, field: 'metadata.tag' },
    { route: '/v1/messages', format: 'anthropic', body: { model: 'sim-chat', max_tokens: 5, messages: user('@') }, field: 'messages.0.content' },
    { route: '/v1/messages/count_tokens', format: 'anthropic', body: { model: '@', messages: user('hi') }, field: 'model' },
    { route: '/v1/responses/input_tokens', format: 'openai', body: { model: 'sim-chat', input: '@' }, field: 'input' },
    { route: '/v1/embeddings', format: 'openai', body: { model: 'sim-embed', input: ['fine', '@'] }, field: 'input.1' },
    { route: '/v1/moderations', format: 'openai', body: { model: '@', input: 'hi' }, field: 'model' },
    { route: '/v1/images/generations', format: 'openai', body: { model: 'sim-image', prompt: '@' }, field: 'prompt' },
    { route: '/v1/systemone', format: 'openai', body: { model: 'jev', state: { note: '@' }, questions: {} }, field: 'state.note' },
    { route: '/v1/auth/proxy/create', format: 'detail', body: { name: '@', allocated_ammount: 1 }, field: 'name' },
    { route: '/v1/auth/proxy/update', format: 'detail', body: { proxy_key: proxyKey, model_whitelist: ['sim-chat', '@'] }, field: 'model_whitelist.1' },
    { route: '/v1/auth/proxy/lookup', format: 'detail', body: { proxy_key: '@' }, field: 'proxy_key' },
  ];
}

/** The message and `param` of an error body, whatever its format. */
function errorOf(format: Format, body: any): { message: string; param?: string | null } {
  if (format === 'detail') return { message: body?.detail };
  if (format === 'anthropic') return { message: body?.error?.message };
  return { message: body?.error?.message, param: body?.error?.param };
}

describe('text PostgreSQL cannot store', () => {
  let account: TestAccount;
  let proxyKey: string;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    proxyKey = (await createProxyKey(account.masterKey, { name: 'kept' })).key;
  });

  for (const [label, marker] of [
    ['a NUL', NUL],
    ['a lone surrogate', LONE],
    ['a lone low surrogate, upper-case escape', '\\uDC00'],
  ] as const) {
    it(`refuses ${label} in any body field on every route with a 400 naming the field`, async () => {
      for (const testCase of bodyCases(proxyKey)) {
        const rawBody = JSON.stringify(testCase.body).replace('"@"', `"x${marker}y"`);
        const response = await api('POST', testCase.route, { key: account.masterKey, rawBody });
        const { message, param } = errorOf(testCase.format, response.body);
        const context = `${testCase.route} ${testCase.field}: ${response.status} ${response.text.slice(0, 300)}`;
        expect({ context, status: response.status, names: typeof message === 'string' && message.includes(testCase.field) }).toEqual({
          context,
          status: 400,
          names: true,
        });
        if (testCase.format === 'openai') {
          expect({ context, param, type: response.body.error.type }).toEqual({ context, param: testCase.field, type: 'invalid_request_error' });
        }
        if (testCase.format === 'anthropic') expect({ context, type: response.body.type }).toEqual({ context, type: 'error' });
      }
      // Nothing was written: the account's one key is as created.
      const keys = await api('GET', '/v1/auth/proxy', { key: account.masterKey });
      expect(keys.body.map((key: { name: string }) => key.name)).toEqual(['kept']);
    });
  }

  it('takes a surrogate pair (an emoji written as two escapes) and other escapes', async () => {
    const rawBody = JSON.stringify({ model: 'sim-chat', messages: user('@'), max_tokens: 4 }).replace('"@"', '"smile \\ud83d\\ude00 \\u00e9 \\\\u0000"');
    const chat = await api('POST', '/v1/chat/completions', { key: account.masterKey, rawBody });
    expect(chat.status).toBe(200);
    const named = await api('POST', '/v1/auth/proxy/create', {
      key: account.masterKey,
      rawBody: '{"name":"key \\ud83d\\ude00","allocated_ammount":1}',
    });
    expect(named.status).toBe(201);
    expect(named.body.name).toBe('key \u{1f600}');
  });

  it.each([
    ['GET', '/v1/responses/resp_%00', 'openai', 'id'],
    ['DELETE', '/v1/responses/resp_%00', 'openai', 'id'],
    ['GET', '/v1/responses/resp_x%00/input_items', 'openai', 'id'],
    ['GET', '/v1/auth/proxy/ek-proxy-%00', 'detail', 'proxy_key'],
    ['POST', '/v1/auth/proxy/toggle/ek-proxy-%00', 'detail', 'proxy_key'],
    ['DELETE', '/v1/auth/proxy/delete/ek-proxy-%00', 'detail', 'proxy_key'],
    ['GET', '/v1/auth/proxy/?proxy_key=ek-proxy-%00', 'detail', 'proxy_key'],
    ['GET', '/v1/user/logs?model=a%00b', 'openai', 'model'],
    ['GET', '/v1/user/logs?request_id=%00', 'openai', 'request_id'],
    ['GET', '/v1/responses/resp_x/input_items?after=%00', 'openai', 'after'],
  ] as const)('refuses %s %s (a percent-encoded NUL) with a 400 naming the parameter', async (method, path, format, field) => {
    const response = await api(method, path, { key: account.masterKey });
    const { message, param } = errorOf(format, response.body);
    expect({ status: response.status, names: message?.includes(field) }).toEqual({ status: 400, names: true });
    if (format === 'openai') expect(param).toBe(field);
  });
});
