import type { OpenAPIObject } from '@nestjs/swagger';
import { apiRoutes, documentedPath, undocumentedRoutes, unservedOperations } from './route-coverage';
import type { RegisteredRoute } from './route-registry';

const route = (method: string, path: string): RegisteredRoute => ({ method, path });
const documentOf = (paths: Record<string, string[]>): OpenAPIObject =>
  ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: Object.fromEntries(Object.entries(paths).map(([path, methods]) => [path, Object.fromEntries(methods.map((method) => [method, { responses: {} }]))])),
  }) as OpenAPIObject;

describe('route coverage', () => {
  it('names a served API route the document lacks, and a documented operation nothing serves', () => {
    const routes = [route('POST', '/v1/chat/completions'), route('POST', '/v1/embeddings')];
    const document = documentOf({ '/v1/chat/completions': ['post'], '/v1/images/generations': ['post'] });
    expect(undocumentedRoutes(routes, document)).toEqual(['POST /v1/embeddings']);
    expect(unservedOperations(routes, document)).toEqual(['POST /v1/images/generations']);
  });

  it('tells methods of one path apart', () => {
    const routes = [route('GET', '/v1/systemone'), route('POST', '/v1/systemone')];
    expect(undocumentedRoutes(routes, documentOf({ '/v1/systemone': ['get'] }))).toEqual(['POST /v1/systemone']);
  });

  it("leaves out Fastify's HEAD twin of every GET, but not a HEAD route of its own", () => {
    const routes = [route('GET', '/v1/models'), route('HEAD', '/v1/models'), route('HEAD', '/v1/files/:id')];
    expect(apiRoutes(routes)).toEqual(['GET /v1/models', 'HEAD /v1/files/{id}']);
  });

  it('leaves out the reference itself, its UI and the probes, and routes outside /v1', () => {
    const routes = ['/v1/openapi.json', '/docs', '/docs/', '/docs/*', '/docs/swagger-ui-init.js', '/healthz', '/readyz', '/metrics', '/v1x'].map((path) =>
      route('GET', path),
    );
    expect(apiRoutes(routes)).toEqual([]);
  });

  it('matches path parameters whatever their names, and the legacy lookup under the path clients call', () => {
    expect(documentedPath('/v1/auth/proxy/toggle/:proxy_key')).toBe('/v1/auth/proxy/toggle/{proxy_key}');
    expect(documentedPath('/v1/files/:id(^\\d+)/content')).toBe('/v1/files/{id}/content');
    expect(documentedPath('/v1/auth/proxy-query-lookup')).toBe('/v1/auth/proxy/');
    const routes = [route('GET', '/v1/auth/proxy/:proxy_key'), route('GET', '/v1/auth/proxy-query-lookup')];
    expect(undocumentedRoutes(routes, documentOf({ '/v1/auth/proxy/{key}': ['get'], '/v1/auth/proxy/': ['get'] }))).toEqual([]);
    expect(undocumentedRoutes(routes, documentOf({ '/v1/auth/proxy/{key}': ['get'] }))).toEqual(['GET /v1/auth/proxy/']);
  });
});
