import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { ClientFormatSchemaName } from '@gateway/client-formats';
import type { ApiSchemaName } from '@gateway/contracts';

export type SchemaName = ClientFormatSchemaName | ApiSchemaName;

/**
 * A reference to one of the wire-shape schemas (the client formats' and the API's other bodies),
 * which `buildOpenApiDocument` puts under `components.schemas`.
 */
export const schemaRef = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Statuses a route answers beyond those the document adds to every route by itself (see
 * `finishDocument`: 401, 403, 429, 500 and 503 on authenticated routes, 400 and 413 where there is
 * input). The error body's schema follows the route's `@ErrorFormat`, as the exception filter does.
 */
export const ApiErrors = (descriptions: Record<number, string>) =>
  applyDecorators(...Object.entries(descriptions).map(([status, description]) => ApiResponse({ status: Number(status), description })));

/**
 * A 200 that is one JSON object, or with `stream: true` a server-sent-event stream whose frames
 * follow the format's own streaming protocol.
 */
export const ApiJsonOrEventStream = (schema: SchemaName, description: string, stream: string) =>
  applyDecorators(
    ApiResponse({
      status: 200,
      description: `${description} With \`stream: true\`: ${stream}`,
      content: {
        'application/json': { schema: schemaRef(schema) },
        'text/event-stream': { schema: { type: 'string', description: 'Server-sent events.' } },
      },
    }),
  );
