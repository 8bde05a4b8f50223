import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { CLIENT_FORMAT_SCHEMAS } from '@gateway/client-formats';
import { API_SCHEMAS } from '@gateway/contracts';
import { SecuritySchemes } from '../auth/auth.decorators';
import { ERROR_BODY_SCHEMA } from '../errors/error-formats';
import { publicPathOf } from '../http/legacy-urls';
import { documentedErrorFormat, ERROR_FORMAT_EXTENSION } from '../policy/error-format.decorator';
import { METERED_EXTENSION } from '../policy/metering.decorators';
import { schemaRef } from './api-docs.decorators';
import { toOpenApi31 } from './openapi-31';

type Json = Record<string, any>;

const DESCRIPTION = [
  'One address and one credential scheme in front of many hosted AI models.',
  '',
  'Every route needs `Authorization: Bearer <API_KEY>` (a master `ek-`, proxy `ek-proxy-` or DevPass `ek-dev-` key) unless it says otherwise; ' +
    "`/v1/messages` also takes `x-api-key`. Errors come in the route family's own shape: `{detail}` on `/v1/auth/…`, " +
    'Anthropic\'s `{type: "error", error}` on `/v1/messages`, OpenAI\'s `{error: {message, type, code, param}}` everywhere else.',
  '',
  "Every response carries the gateway's own `x-request-id`; a client's `x-client-request-id` (or `x-request-id`) is echoed as `x-client-request-id`. Deprecated operations are the legacy proxy-key forms.",
].join('\n');

const TAGS: [string, string][] = [
  ['Text generation', 'Chat completions, responses and messages, for any catalog model whatever its provider.'],
  ['Decisions', 'Structured answers (`choice`, `score`, `noul`) from the `jev` decision model.'],
  ['Models', 'The model catalog.'],
  ['Account', 'Usage summary and request logs.'],
  ['Keys', 'The primary key.'],
  ['Proxy keys', 'Scoped sub-keys with their own budget, model whitelist, IP allowlist and expiry.'],
];

/** Statuses any route may answer, by what the route has (see `finishOperation`). */
const COMMON_ERRORS: Record<number, string> = {
  400: 'Invalid request: the message names the field at fault.',
  401: 'Missing or invalid API key; where proxy keys are admitted, also a disabled or expired one.',
  403: 'The key may not do this: a proxy key outside its IP allowlist or model whitelist, or the DevPass rule (`:dev` models take DevPass keys only).',
  413: 'The body is larger than the limit.',
  429: 'Rate limit reached: wait for `Retry-After`.',
  500: 'Unexpected failure; quote the `request_id` of the body when reporting it.',
  503: 'A gateway service is unavailable or too slow: retry with backoff.',
};

const HEADERS: Json = {
  'x-request-id': { description: "The gateway's request id (`req_` and 32 hex digits), generated for every request.", schema: { type: 'string' } },
  'x-client-request-id': {
    description: "The client's own id, echoed when it sent a `x-client-request-id` (or else `x-request-id`) of 1 to 128 letters, digits or `._:-`.",
    schema: { type: 'string' },
  },
  'x-ratelimit-limit-requests': { description: "The plan's requests per minute.", schema: { type: 'integer' } },
  'x-ratelimit-remaining-requests': { schema: { type: 'integer' } },
  'x-ratelimit-reset-requests': { description: 'Seconds until the window resets, e.g. `42s`.', schema: { type: 'string' } },
  'x-ratelimit-limit-tokens': { description: "The plan's tokens per minute.", schema: { type: 'integer' } },
  'x-ratelimit-remaining-tokens': { schema: { type: 'integer' } },
  'x-ratelimit-reset-tokens': { description: 'Seconds until the window resets, e.g. `42s`.', schema: { type: 'string' } },
  'retry-after': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'x-budget-period': {
    description: "A proxy key's (or a DevPass key's) budget with least room when the request was admitted: its period (`daily`, `lifetime`, `5h`, …).",
    schema: { type: 'string' },
  },
  'x-budget-timezone': { description: 'The IANA zone of that budget.', schema: { type: 'string' } },
  'x-budget-unit': { description: '`credits` (a proxy key) or `tokens` (a DevPass key).', schema: { type: 'string' } },
  'x-budget-limit': { description: "The budget's amount per window.", schema: { type: 'string' } },
  'x-budget-remaining': { description: 'What it had left before this request.', schema: { type: 'string' } },
  'x-budget-reset': { description: 'Unix seconds when it next frees room; absent when nothing will.', schema: { type: 'integer' } },
};
const RATE_LIMIT_HEADERS = Object.keys(HEADERS).filter((name) => name.startsWith('x-ratelimit-'));
const BUDGET_HEADERS = Object.keys(HEADERS).filter((name) => name.startsWith('x-budget-'));
const headerRefs = (names: string[]): Json => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/**
 * The OpenAPI 3.1 document of every route the edge's controllers declare, generated from the
 * class-validator DTOs that validate some routes' input and from the wire-shape schemas
 * (`schemas`: the client formats' and the API's other bodies, the very objects the parsers compile
 * and the producing code takes its types from, unless a test passes others).
 */
export function buildOpenApiDocument(app: INestApplication, schemas: Record<string, object> = { ...CLIENT_FORMAT_SCHEMAS, ...API_SCHEMAS }): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Model Gateway API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key: `ek-…`, `ek-proxy-…` or `ek-dev-…`.' }, SecuritySchemes.bearer)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key, on `/v1/messages` only.' }, SecuritySchemes.xApiKey)
    .addSecurityRequirements(SecuritySchemes.bearer);
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());
  // The wire-shape schemas as the code uses them (JSON Schema 2020-12, OpenAPI 3.1's dialect).
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...structuredClone(schemas) } };
  return finishDocument(document);
}

/** What the decorators leave implicit, filled in the same way for every route. */
export function finishDocument(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...HEADERS } };
  const paths: Json = {};
  for (const [routePath, item] of Object.entries(document.paths)) {
    const path = publicPathOf(routePath);
    paths[path] = item;
    for (const [method, operation] of Object.entries(item as Json)) {
      if (typeof operation === 'object' && operation !== null && 'responses' in operation) finishOperation(path, method, operation);
    }
  }
  document.paths = paths;
  return toOpenApi31(document);
}

function finishOperation(path: string, method: string, operation: Json): void {
  operation.operationId = operationIdFor(method, path);
  // `@Public()` writes an empty requirement (anonymous allowed); no requirement at all says the same more plainly.
  if (Array.isArray(operation.security) && operation.security.every((requirement: Json) => Object.keys(requirement).length === 0)) {
    operation.security = [];
  }
  const authenticated = !(Array.isArray(operation.security) && operation.security.length === 0);
  const hasInput = Boolean(operation.requestBody) || (operation.parameters ?? []).some((parameter: Json) => parameter.in !== 'header');
  const statuses = [500];
  if (authenticated) statuses.push(401, 403, 429, 503);
  if (hasInput) statuses.push(400);
  if (operation.requestBody) statuses.push(413);

  const responses: Json = operation.responses;
  const keyTypes: string[] | undefined = operation['x-key-types'];
  if (authenticated && keyTypes) {
    const names = keyTypes.map((type) => (type === 'dev' ? 'DevPass' : type));
    responses[403] ??= { description: `Only a ${names.join(' or ')} key may call this route.` };
  }
  for (const status of statuses) responses[status] ??= { description: COMMON_ERRORS[status] };

  // The route's `@ErrorFormat`, the same declaration the exception filter answers by.
  const errorSchema = schemaRef(ERROR_BODY_SCHEMA[documentedErrorFormat(operation)]);
  delete operation[ERROR_FORMAT_EXTENSION];
  const metered = operation[METERED_EXTENSION] === true;
  delete operation[METERED_EXTENSION];
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status);
    if (!response.description) response.description = code < 300 ? 'OK' : (COMMON_ERRORS[code] ?? '');
    if (code >= 400) response.content ??= { 'application/json': { schema: errorSchema } };
    const headers = ['x-request-id', 'x-client-request-id'];
    if (authenticated && (code < 300 || code === 429)) headers.push(...RATE_LIMIT_HEADERS);
    if (code === 429) headers.push('retry-after');
    if (metered && code < 300) headers.push(...BUDGET_HEADERS);
    response.headers = { ...headerRefs(headers), ...response.headers };
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

/** `POST /v1/auth/proxy/toggle/{proxy_key}` → `postAuthProxyToggleByProxyKey`: unique because (method, path) is. */
export function operationIdFor(method: string, path: string): string {
  const pascal = (text: string) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((word) => word[0].toUpperCase() + word.slice(1))
      .join('');
  const segments = path.replace(/^\/v1(\/|$)/, '').split('/');
  const words = segments.map((segment) => (/^\{.+\}$/.test(segment) ? `By${pascal(segment)}` : segment === '' ? 'Slash' : pascal(segment)));
  return method.toLowerCase() + words.join('');
}
