import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { CLIENT_FORMAT_SCHEMAS, clientFormat, compileRequestValidator } from '@gateway/client-formats';
import { createJsonLogger, JsonLoggerService, parseEnv } from '@gateway/platform';
import { join } from 'node:path';
import { EdgeModule } from '../app.module';
import { EdgeEnv } from '../config/edge.env';
import { configureEdgeApp, createEdgeHttp } from '../http/edge-http';
import { buildOpenApiDocument } from './openapi.document';
import { apiRoutes, documentedOperations, undocumentedRoutes, unservedOperations } from './route-coverage';
import type { RegisteredRoute } from './route-registry';
import { DomainError } from '@gateway/errors';

type Json = Record<string, any>;

function collect(value: unknown, visit: (node: Json) => void): void {
  if (Array.isArray(value)) value.forEach((item) => collect(item, visit));
  else if (typeof value === 'object' && value !== null) {
    visit(value as Json);
    Object.values(value).forEach((item) => collect(item, visit));
  }
}

const operationsOf = (document: OpenAPIObject): [string, Json][] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([, operation]) => typeof operation === 'object' && operation?.responses)
      .map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation]),
  );

describe('the API reference (the edge app as main.ts builds it, in preview mode)', () => {
  let app: NestFastifyApplication;
  let routes: RegisteredRoute[];
  let document: OpenAPIObject;

  beforeAll(async () => {
    const env = parseEnv(EdgeEnv, { MODELS_CONFIG: join(__dirname, '../../../../config/models.yaml'), FILE_URL_SECRET: 'x'.repeat(32) });
    const http = createEdgeHttp(env);
    routes = http.routes;
    // Preview mode registers every route without constructing a provider: nothing connects to NATS or Redis.
    app = await NestFactory.create<NestFastifyApplication>(
      EdgeModule.forRoot(env, new JsonLoggerService(createJsonLogger('edge-gateway', 'error'))),
      http.adapter,
      {
        preview: true,
        logger: false,
        bodyParser: false,
      },
    );
    document = configureEdgeApp(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  const inject = (url: string) => app.getHttpAdapter().getInstance().inject({ method: 'GET', url });

  it('documents every API route Fastify registered, and only those', () => {
    expect(apiRoutes(routes)).toEqual(expect.arrayContaining(['POST /v1/chat/completions', 'GET /v1/auth/proxy/', 'GET /v1/systemone']));
    expect(undocumentedRoutes(routes, document)).toEqual([]);
    expect(unservedOperations(routes, document)).toEqual([]);
    expect(documentedOperations(document)).toHaveLength(apiRoutes(routes).length);
  });

  it('serves the document at GET /v1/openapi.json', async () => {
    const response = await inject('/v1/openapi.json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it('is an OpenAPI 3.1 document whose references all resolve', () => {
    expect(document.openapi).toBe('3.1.0');
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"nullable":(true|false)/);
    expect(text).not.toMatch(/"exclusive(Minimum|Maximum)":(true|false)/);
    const refs = new Set<string>();
    collect(document, (node) => typeof node.$ref === 'string' && refs.add(node.$ref));
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<Json | undefined>((node, key) => node?.[key], document as Json);
      expect({ ref, resolves: target !== undefined }).toEqual({ ref, resolves: true });
    }
    const ids = operationsOf(document).map(([, operation]) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every operation a success body (a WebSocket upgrade: its 101) and every error a body schema', () => {
    for (const [name, operation] of operationsOf(document)) {
      const statuses = Object.keys(operation.responses).map(Number);
      const success = statuses.find((status) => status >= 200 && status < 300);
      const upgrade = statuses.includes(101);
      expect({ name, success: upgrade || (success !== undefined && Boolean(operation.responses[success].content)) }).toEqual({ name, success: true });
      for (const status of statuses.filter((code) => code >= 400)) {
        expect({ name, status, schema: operation.responses[status].content?.['application/json']?.schema?.$ref }).toEqual({
          name,
          status,
          schema: expect.stringMatching(/^#\/components\/schemas\/(OpenAIError|AnthropicError|DetailError)$/),
        });
      }
    }
  });

  it('answers errors in the shape of the route family', () => {
    const errorSchema = (path: string, method: string, status: number) =>
      (document.paths[path] as Json)[method].responses[status].content['application/json'].schema.$ref.split('/').pop();
    expect(errorSchema('/v1/auth/proxy/lookup', 'post', 404)).toBe('DetailError');
    expect(errorSchema('/v1/messages', 'post', 400)).toBe('AnthropicError');
    expect(errorSchema('/v1/chat/completions', 'post', 402)).toBe('OpenAIError');
    expect(errorSchema('/v1/systemone', 'post', 429)).toBe('OpenAIError');
  });

  it('marks exactly the legacy proxy-key forms deprecated', () => {
    const deprecated = operationsOf(document)
      .filter(([, operation]) => operation.deprecated)
      .map(([name]) => name)
      .sort();
    expect(deprecated).toEqual([
      'DELETE /v1/auth/proxy/delete/{proxy_key}',
      'GET /v1/auth/proxy/',
      'GET /v1/auth/proxy/{proxy_key}',
      'POST /v1/auth/proxy/toggle/{proxy_key}',
      'POST /v1/auth/proxy/update/{proxy_key}',
    ]);
  });

  it('serves Swagger UI at GET /docs, with every asset from the gateway itself', async () => {
    const page = await inject('/docs');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)=['"]([^'"]+)['"]/g)].map((match) => match[1]);
    expect(assets).toEqual(expect.arrayContaining([expect.stringMatching(/swagger-ui-bundle\.js$/), expect.stringMatching(/swagger-ui-init\.js$/)]));
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, 'http://gateway/docs');
      const response = await inject(url.pathname);
      expect({ asset, status: response.statusCode }).toEqual({ asset, status: 200 });
    }
    expect((await inject('/docs/swagger-ui-init.js')).body).toContain('"openapi": "3.1.0"');
  });

  describe('the client formats: the documented request rules are the enforced ones', () => {
    const ROUTES = { '/v1/chat/completions': 'chat', '/v1/responses': 'responses', '/v1/messages': 'messages' } as const;
    const bodyOf = (doc: OpenAPIObject, path: string): Json => {
      const ref: string = (doc.paths[path].post as Json).requestBody.content['application/json'].schema.$ref;
      return (doc.components?.schemas as Json)[ref.replace('#/components/schemas/', '')];
    };
    const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));

    it.each(Object.entries(ROUTES))('%s documents exactly the schema its parser validates with', (path, format) => {
      expect(bodyOf(document, path)).toEqual(asJson(clientFormat(format).requestSchema));
    });

    it('a changed limit changes both the 400 and the document', () => {
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 1.8 };
      expect(() => clientFormat('chat').parse(body, { reasoningExcludeSuffix: false })).not.toThrow();
      expect(bodyOf(document, '/v1/chat/completions').properties.temperature.maximum).toBe(2);

      const schemas = asJson(CLIENT_FORMAT_SCHEMAS);
      schemas.ChatCompletionRequest.properties.temperature.maximum = 1.5;
      const error = (() => {
        try {
          compileRequestValidator(schemas.ChatCompletionRequest)(body);
        } catch (thrown) {
          return thrown as DomainError;
        }
      })();
      expect(error).toBeInstanceOf(DomainError);
      expect({ status: error?.status, message: error?.message, param: error?.param }).toEqual({
        status: 400,
        message: 'temperature: must be at most 1.5, got 1.8',
        param: 'temperature',
      });
      expect(bodyOf(buildOpenApiDocument(app, schemas), '/v1/chat/completions').properties.temperature.maximum).toBe(1.5);
    });
  });
});
