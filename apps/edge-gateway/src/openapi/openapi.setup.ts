import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { buildOpenApiDocument } from './openapi.document';
import { DOCS_PATH, OPENAPI_JSON_PATH } from './route-coverage';

/**
 * Serves the document at `GET /v1/openapi.json` and Swagger UI at `GET /docs`, both without a key
 * (they are plain Fastify routes, outside Nest's guards). The UI's assets come from swagger-ui-dist
 * on disk: nothing is fetched from elsewhere.
 */
export function mountOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(DOCS_PATH.slice(1), app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH.slice(1),
    raw: ['json'],
    customSiteTitle: 'Model Gateway API reference',
  });
  return document;
}
