/**
 * Malformed text-generation bodies on all three routes: each is a 400 in the route's own error
 * format, naming the offending field where there is one. None may be a 500.
 */
import { api, createAccount, TestAccount } from '../support/api';

type Route = '/v1/chat/completions' | '/v1/responses' | '/v1/messages';

interface Case {
  name: string;
  body?: unknown;
  rawBody?: string;
  /** The field the message (and OpenAI's `param`) must name. */
  field?: string;
}

const user = [{ role: 'user', content: 'Hello' }];

/** A valid body of each route, to break one field at a time. */
const valid: Record<Route, Record<string, unknown>> = {
  '/v1/chat/completions': { model: 'sim-chat', messages: user },
  '/v1/responses': { model: 'sim-chat', input: 'Hello' },
  '/v1/messages': { model: 'sim-chat', max_tokens: 100, messages: user },
};

function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...body };
  delete copy[field];
  return copy;
}

function casesFor(route: Route): Case[] {
  const base = valid[route];
  const generic: Case[] = [
    { name: 'not JSON', rawBody: '{"model": ' },
    { name: 'empty body', rawBody: '' },
    { name: 'JSON array', rawBody: '[1,2]' },
    { name: 'JSON string', rawBody: '"hello"' },
    { name: 'JSON null', rawBody: 'null' },
    { name: '__proto__ key', rawBody: '{"__proto__": {"admin": true}, "model": "sim-chat"}' },
    { name: 'missing model', body: without(base, 'model'), field: 'model' },
    { name: 'model is a number', body: { ...base, model: 42 }, field: 'model' },
    { name: 'model is empty', body: { ...base, model: '' }, field: 'model' },
    // An object with its own toString could not be turned into text (was a 500).
    { name: 'model is an object with a toString key', body: { ...base, model: { toString: 1 } }, field: 'model' },
    { name: 'model is an array', body: { ...base, model: ['sim-chat'] }, field: 'model' },
    // Text PostgreSQL cannot store, which the usage event would carry (was a 404 whose event could never be written).
    { name: 'model holds a NUL', rawBody: JSON.stringify({ ...base, model: 'sim-chat' }).replace('sim-chat', 'sim\\u0000chat'), field: 'model' },
    { name: 'model holds a lone surrogate', rawBody: JSON.stringify({ ...base, model: 'sim-chat' }).replace('sim-chat', 'sim\\ud800chat'), field: 'model' },
    { name: 'stream is a string', body: { ...base, stream: 'yes' }, field: 'stream' },
    { name: 'temperature is a string', body: { ...base, temperature: 'hot' }, field: 'temperature' },
    { name: 'top_p above 1', body: { ...base, top_p: 1.5 }, field: 'top_p' },
  ];
  switch (route) {
    case '/v1/chat/completions':
      return [
        ...generic,
        { name: 'missing messages', body: without(base, 'messages'), field: 'messages' },
        { name: 'messages not an array', body: { ...base, messages: 'Hello' }, field: 'messages' },
        { name: 'messages empty', body: { ...base, messages: [] }, field: 'messages' },
        { name: 'message not an object', body: { ...base, messages: ['Hello'] }, field: 'messages.0' },
        { name: 'unknown role', body: { ...base, messages: [{ role: 'wizard', content: 'x' }] }, field: 'messages.0.role' },
        { name: 'user content missing', body: { ...base, messages: [{ role: 'user' }] }, field: 'messages.0.content' },
        { name: 'temperature out of range', body: { ...base, temperature: 3 }, field: 'temperature' },
        { name: 'negative max_tokens', body: { ...base, max_tokens: -5 }, field: 'max_tokens' },
        { name: 'fractional max_tokens', body: { ...base, max_tokens: 1.5 }, field: 'max_tokens' },
        { name: 'tools not an array', body: { ...base, tools: { type: 'function' } }, field: 'tools' },
        { name: 'tool without function', body: { ...base, tools: [{ type: 'function' }] }, field: 'tools.0.function' },
        // A tool of a type the gateway does not serve is skipped (forward-compatible parsing); a type that is no string is still refused.
        { name: 'tool type not a string', body: { ...base, tools: [{ type: 7, function: { name: 'x' } }] }, field: 'tools.0.type' },
        { name: 'tool without name', body: { ...base, tools: [{ type: 'function', function: { parameters: {} } }] }, field: 'tools.0.function.name' },
        {
          name: 'tool parameters not an object',
          body: { ...base, tools: [{ type: 'function', function: { name: 'x', parameters: 'none' } }] },
          field: 'tools.0.function.parameters',
        },
        { name: 'unknown tool_choice', body: { ...base, tool_choice: 'sometimes' }, field: 'tool_choice' },
        { name: 'tool message without tool_call_id', body: { ...base, messages: [...user, { role: 'tool', content: 'x' }] }, field: 'messages.1.tool_call_id' },
        { name: 'too many stop strings', body: { ...base, stop: ['a', 'b', 'c', 'd', 'e'] }, field: 'stop' },
        { name: 'web_search true (no model searches the web)', body: { ...base, web_search: true }, field: 'web_search' },
        { name: 'web_search not a boolean', body: { ...base, web_search: 'yes' }, field: 'web_search' },
      ];
    case '/v1/responses':
      return [
        ...generic,
        { name: 'missing input', body: without(base, 'input'), field: 'input' },
        { name: 'input neither string nor array', body: { ...base, input: 5 }, field: 'input' },
        { name: 'input empty', body: { ...base, input: [] }, field: 'input' },
        { name: 'input item of unknown type', body: { ...base, input: [{ type: 'telepathy' }] }, field: 'input.0.type' },
        { name: 'input message with unknown role', body: { ...base, input: [{ role: 'wizard', content: 'x' }] }, field: 'input.0.role' },
        { name: 'temperature out of range', body: { ...base, temperature: 3 }, field: 'temperature' },
        { name: 'max_output_tokens zero', body: { ...base, max_output_tokens: 0 }, field: 'max_output_tokens' },
        { name: 'tools not an array', body: { ...base, tools: 'get_weather' }, field: 'tools' },
        { name: 'function tool without name', body: { ...base, tools: [{ type: 'function' }] }, field: 'tools.0.name' },
        { name: 'metadata value not a string', body: { ...base, metadata: { a: 1 } }, field: 'metadata.a' },
        { name: 'web_search true (no model searches the web)', body: { ...base, web_search: true }, field: 'web_search' },
        { name: 'store not a boolean', body: { ...base, store: 'yes' }, field: 'store' },
        { name: 'previous_response_id not a string', body: { ...base, previous_response_id: 5 }, field: 'previous_response_id' },
      ];
    case '/v1/messages':
      return [
        ...generic,
        { name: 'missing messages', body: without(base, 'messages'), field: 'messages' },
        { name: 'messages not an array', body: { ...base, messages: 'Hello' }, field: 'messages' },
        { name: 'messages empty', body: { ...base, messages: [] }, field: 'messages' },
        { name: 'unknown role', body: { ...base, messages: [{ role: 'wizard', content: 'x' }] }, field: 'messages.0.role' },
        { name: 'content missing', body: { ...base, messages: [{ role: 'user' }] }, field: 'messages.0.content' },
        { name: 'unknown content block', body: { ...base, messages: [{ role: 'user', content: [{ type: 'hologram' }] }] }, field: 'messages.0.content.0.type' },
        { name: 'temperature out of range', body: { ...base, temperature: 1.5 }, field: 'temperature' },
        { name: 'max_tokens zero', body: { ...base, max_tokens: 0 }, field: 'max_tokens' },
        { name: 'tools not an array', body: { ...base, tools: { name: 'x' } }, field: 'tools' },
        { name: 'tool without input_schema', body: { ...base, tools: [{ name: 'get_weather' }] }, field: 'tools.0.input_schema' },
        { name: 'tool input_schema not an object', body: { ...base, tools: [{ name: 'x', input_schema: 'none' }] }, field: 'tools.0.input_schema' },
        { name: 'unknown tool_choice type', body: { ...base, tool_choice: { type: 'maybe' } }, field: 'tool_choice.type' },
        { name: 'thinking enabled without budget', body: { ...base, thinking: { type: 'enabled' } }, field: 'thinking.budget_tokens' },
        { name: 'system not a string or array', body: { ...base, system: 5 }, field: 'system' },
        {
          name: 'tool_result without tool_use_id',
          body: { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] },
          field: 'messages.0.content.0.tool_use_id',
        },
      ];
  }
}

describe('malformed text-generation bodies', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  for (const route of Object.keys(valid) as Route[]) {
    describe(route, () => {
      it('accepts the valid body the cases are derived from', async () => {
        const response = await api('POST', route, { key: account.masterKey, body: valid[route] });
        expect(response.status).toBe(200);
        if (route !== '/v1/messages') {
          // web_search: false is what not searching looks like: accepted.
          expect((await api('POST', route, { key: account.masterKey, body: { ...valid[route], web_search: false } })).status).toBe(200);
        }
      });

      it("a body within the HTTP limit but over what the message bus carries → 413 in the route's error format", async () => {
        // About 1.5 MB of prompt: under the edge's 10 MiB body limit, over NATS' 1 MiB max_payload.
        const big = {
          ...valid[route],
          ...(route === '/v1/responses' ? { input: 'word '.repeat(300_000) } : { messages: [{ role: 'user', content: 'word '.repeat(300_000) }] }),
        };
        const response = await api('POST', route, { key: account.masterKey, body: big });
        expect(response.status).toBe(413);
        expect(response.body.error.message).toMatch(/too large/);
        if (route === '/v1/messages') expect(response.body.type).toBe('error');
        else expect(response.body.error.code).toBe('request_too_large');
      });

      it.each(casesFor(route).map((testCase) => [testCase.name, testCase] as const))("%s → 400 in the route's error format", async (_name, testCase) => {
        const response = await api('POST', route, {
          key: account.masterKey,
          ...(testCase.rawBody !== undefined ? { rawBody: testCase.rawBody, headers: { 'content-type': 'application/json' } } : { body: testCase.body }),
        });
        const context = `${route} / ${testCase.name}: ${response.status} ${response.text.slice(0, 300)}`;
        expect({ context, status: response.status }).toEqual({ context, status: 400 });
        if (route === '/v1/messages') {
          expect({ context, body: response.body }).toEqual({
            context,
            body: { type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } },
          });
          if (testCase.field) expect({ context, names: response.body.error.message.includes(testCase.field) }).toEqual({ context, names: true });
        } else {
          const error = response.body?.error ?? {};
          expect({ context, keys: Object.keys(response.body ?? {}), errorKeys: Object.keys(error).sort() }).toEqual({
            context,
            keys: ['error'],
            errorKeys: ['code', 'message', 'param', 'type'],
          });
          expect({ context, type: error.type, message: typeof error.message, param: error.param }).toEqual({
            context,
            type: 'invalid_request_error',
            message: 'string',
            param: testCase.field ?? null,
          });
          if (testCase.field) expect({ context, names: response.body.error.message.includes(testCase.field) }).toEqual({ context, names: true });
        }
      });
    });
  }
});
