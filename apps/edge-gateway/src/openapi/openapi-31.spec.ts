import type { OpenAPIObject } from '@nestjs/swagger';
import { toOpenApi31 } from './openapi-31';

const withSchemas = (schemas: Record<string, object>): OpenAPIObject =>
  ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, components: { schemas } }) as OpenAPIObject;

describe('toOpenApi31', () => {
  it('writes nullable as a null type, in nested schemas too', () => {
    const document = toOpenApi31(
      withSchemas({
        A: {
          type: 'object',
          properties: {
            last_used: { type: 'integer', nullable: true },
            spend_window: { type: 'string', enum: ['daily', 'weekly'], nullable: true },
            nullable: { type: 'boolean' },
            list: { type: 'array', items: { type: 'string', nullable: true } },
            kept: { type: 'string', nullable: false },
          },
        },
      }),
    );
    expect(document.components!.schemas!.A).toEqual({
      type: 'object',
      properties: {
        last_used: { type: ['integer', 'null'] },
        spend_window: { type: ['string', 'null'], enum: ['daily', 'weekly', null] },
        nullable: { type: 'boolean' },
        list: { type: 'array', items: { type: ['string', 'null'] } },
        kept: { type: 'string' },
      },
    });
  });

  it('makes a nullable reference one of the reference and null', () => {
    const document = toOpenApi31(
      withSchemas({ A: { properties: { usage: { type: 'object', allOf: [{ $ref: '#/components/schemas/U' }], nullable: true, description: 'd' } } } }),
    );
    expect((document.components!.schemas!.A as any).properties.usage).toEqual({
      oneOf: [{ allOf: [{ $ref: '#/components/schemas/U' }] }, { type: 'null' }],
      description: 'd',
    });
  });

  it('turns boolean exclusive bounds into numbers', () => {
    const document = toOpenApi31(withSchemas({ A: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: false } }));
    expect(document.components!.schemas!.A).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 1 });
  });

  it('rewrites the schemas of parameters, bodies and responses', () => {
    const document = toOpenApi31({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/x': {
          post: {
            parameters: [{ name: 'q', in: 'query', schema: { type: 'string', nullable: true } }],
            requestBody: { content: { 'application/json': { schema: { type: 'integer', nullable: true } } } },
            responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'number', nullable: true } } } } },
          },
        },
      },
    } as OpenAPIObject);
    const operation = document.paths['/x'].post as any;
    expect(operation.parameters[0].schema.type).toEqual(['string', 'null']);
    expect(operation.requestBody.content['application/json'].schema.type).toEqual(['integer', 'null']);
    expect(operation.responses[200].content['application/json'].schema.type).toEqual(['number', 'null']);
  });
});
