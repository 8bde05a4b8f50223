/**
 * Fuzzing every `/v1` route the OpenAPI document lists: random JSON bodies (deep nesting, huge
 * strings, wrong types, prototype keys, objects where text is expected such as
 * `{"model":{"toString":1}}`, NULs and lone surrogates in any string, near-valid bodies), random
 * path parameters and query strings (percent-encoded NULs included) and headers, with and without
 * a valid key. Asserts no 5xx and no request over 2 s. Three fixed seeds in CI (about 20 s each);
 * `FUZZ_RUNS=<n>` for a larger run per seed, `FUZZ_SEED=<n>` to replay one sequence.
 */
import * as fc from 'fast-check';
import { api, createAccount, createProxyKey, TestAccount } from './support/api';
import { suiteInfo } from './support/suite-info';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEEDS = process.env.FUZZ_SEED ? [Number(process.env.FUZZ_SEED)] : [20_120_012, 4, 5];
const MAX_MS = 2000;

/** Routes that would disable the fuzzer's own key: called only without a valid key. */
const KEY_DESTROYING = new Set(['GET /v1/auth/key/regen']);

interface Route {
  method: string;
  path: string;
}

const key = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'model',
  'messages',
  'input',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'stream',
  'proxy_key',
  'name',
  'allocated_ammount',
  'n',
  'size',
  'tools',
  'content',
  'role',
  'since',
  'until',
  'limit',
  'cursor',
);
const huge = fc.constantFrom('x'.repeat(300_000), '\u4e00'.repeat(100_000), ' '.repeat(200_000), '\ud800'.repeat(1000), 'a '.repeat(100_000));
/** Text PostgreSQL cannot store (JSON.stringify writes it as `\u0000` / `\ud800` escapes), and a surrogate pair it can. */
const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\ude00\ud83d', 'sim-chat\u0000', '\ud83d\ude00');
/** Objects where a string is expected: `String()` or a template on them throws. */
const notText = fc.constantFrom<unknown>({ toString: 1 }, { valueOf: 1, toString: null }, { toString: {} }, [{ toString: 1 }]);
const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  unstorable,
  fc.string({ maxLength: 8 }).chain((text) => unstorable.map((bad) => `${text}${bad}${text}`)),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    1e308,
    -1e308,
    8_640_000_000_001,
    Number.MAX_SAFE_INTEGER + 2,
    0,
    -1,
    'sim-chat',
    'fake-openai',
    'jev',
    'user',
    'assistant',
    'system',
    'tool',
  ),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, notText, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(key, fc.string({ maxLength: 8 }), unstorable), tie('value'), { maxKeys: 5 }),
})).value;

/** A body the routes nearly accept, with one field replaced. */
const nearlyValid = fc.record({
  model: fc.oneof(fc.constantFrom('sim-chat', 'fake-openai', 'sim-chat:reasoning-exclude', 'jev', 'nope'), scalar, notText),
  messages: fc.oneof(fc.constant([{ role: 'user', content: 'hi' }]), json),
  input: fc.oneof(fc.constant('hi'), json, huge),
  max_tokens: fc.oneof(fc.integer({ min: 1, max: 64 }), scalar),
  max_completion_tokens: fc.option(scalar, { nil: undefined }),
  stream: fc.option(fc.boolean(), { nil: undefined }),
});

const rawBody = fc.oneof(
  json.map((value) => JSON.stringify(value)),
  nearlyValid.map((value) => JSON.stringify(value)),
  fc.integer({ min: 65, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 65, max: 5000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  huge.map((text) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: text }], input: text, max_tokens: 4 })),
  fc.constantFrom(
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{',
    '',
    'null',
    '"x"',
    '[]',
    '{"model":"sim-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"max_completion_tokens":4096}',
  ),
  fc.string({ maxLength: 200 }),
);

const query = fc.array(
  fc.tuple(
    fc.oneof(key, fc.string({ maxLength: 6 })),
    fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('1e300', '8640000000001', '-1', 'NaN', '[]', '%00', 'a%00b', '%ff', '%ED%A0%80', '%F0%9F%98%80')),
  ),
  { maxLength: 3 },
);

/** A path parameter as sent (percent-encoded): random text, or one that decodes to a NUL or an invalid sequence. */
const pathParam = fc.oneof(
  fc.string({ maxLength: 12 }).map((text) => encodeURIComponent(text) || 'x'),
  fc.constantFrom('%00', 'resp_%00', 'ek-proxy-%00', 'x%00y', '%ED%A0%80', '%F0%9F%98%80', '%ff'),
);

const headers = fc.dictionary(
  fc.constantFrom(
    'content-type',
    'x-api-key',
    'x-request-id',
    'x-client-request-id',
    'traceparent',
    'x-forwarded-for',
    'accept',
    'anthropic-version',
    'partner-version',
  ),
  fc.oneof(
    fc.string({ maxLength: 30 }).map((value) => value.replace(/[^\x20-\x7e]/g, '')),
    fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', 'x'.repeat(2000)),
  ),
  { maxKeys: 3 },
);

describe('fuzzing every /v1 route', () => {
  let routes: Route[];
  let account: TestAccount;
  let proxyKey: string;

  beforeAll(async () => {
    // The admin CLI blocks this process; run it before any request, so that no pooled connection
    // sits through the block (a socket the client keeps past the server's header timeout is a 408).
    account = createAccount('pro', '1000');
    const document = (await api('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => ({ method: method.toUpperCase(), path })),
    );
    proxyKey = (await createProxyKey(account.masterKey, { allocated_ammount: 1 })).key;
  });

  it.each(SEEDS)(
    `answers ${RUNS} random requests (seed %p) without a 5xx, each within ${MAX_MS} ms`,
    async (seed) => {
      expect(routes.length).toBeGreaterThan(20);
      const failures: string[] = [];
      await fc
        .assert(
          fc.asyncProperty(
            fc.nat(),
            fc.constantFrom('master', 'proxy', 'none', 'garbage'),
            fc.option(rawBody, { nil: undefined }),
            query,
            headers,
            pathParam,
            fc.boolean(),
            async (routeIndex, auth, body, pairs, extraHeaders, param, onEdgeB) => {
              const route = routes[routeIndex % routes.length];
              const path = route.path.replace(/\{[^}]+\}/g, () => param);
              const search = pairs.length ? `?${pairs.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join('&')}` : '';
              const usable = !KEY_DESTROYING.has(`${route.method} ${route.path}`);
              const keyFor = { master: usable ? account.masterKey : 'sk-garbage', proxy: proxyKey, none: undefined, garbage: 'sk-'.padEnd(60, 'z') }[auth];
              const withBody = route.method !== 'GET' && body !== undefined;
              const started = performance.now();
              const response = await api(route.method, `${path}${search}`, {
                key: keyFor,
                headers: extraHeaders,
                ...(withBody ? { rawBody: body } : {}),
                base: onEdgeB ? suiteInfo().edgeB : suiteInfo().edgeA,
              });
              const ms = performance.now() - started;
              if (response.status >= 500 || ms > MAX_MS) {
                failures.push(
                  `${route.method} ${path}${search} (${auth}) → ${response.status} in ${Math.round(ms)} ms: ${response.text.slice(0, 300)} body: ${String(body).slice(0, 300)}`,
                );
              }
              return response.status < 500 && ms <= MAX_MS;
            },
          ),
          { seed, numRuns: RUNS, endOnFailure: true },
        )
        .catch((error: Error) => {
          throw new Error(`${failures.join('\n')}\n${error.message}`);
        });
    },
    600_000,
  );
});
