import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';

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
export const ApiJsonOrEventStream = (type: Type<unknown>, description: string, stream: string) =>
  applyDecorators(
    ApiExtraModels(type),
    ApiResponse({
      status: 200,
      description: `${description} With \`stream: true\`: ${stream}`,
      content: {
        'application/json': { schema: { $ref: getSchemaPath(type) } },
        'text/event-stream': { schema: { type: 'string', description: 'Server-sent events.' } },
      },
    }),
  );
