import type { TextFormat } from '@gateway/contracts';
import { DomainError } from '@gateway/errors';
import { MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH } from './common/response-format';
import { clientFormat } from './registry';
import { context, encodeAll, eventsFor, parseFrames, response } from './testing/spec-fixtures';

const opts = { reasoningExcludeSuffix: false };
const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };

const bodies: Record<TextFormat, Record<string, unknown>> = {
  chat: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  responses: { model: 'm', input: 'hi' },
  messages: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
};

const parse = (format: TextFormat, extra: Record<string, unknown>) => clientFormat(format).parse({ ...bodies[format], ...extra }, opts).request;

function rejection(format: TextFormat, extra: Record<string, unknown>): DomainError {
  try {
    parse(format, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected the body to be rejected');
}

describe('structured output: chat response_format', () => {
  it('parses json_schema with its name, description and strict flag', () => {
    const request = parse('chat', {
      response_format: { type: 'json_schema', json_schema: { name: 'math', description: 'An answer', schema, strict: true } },
    });
    expect(request.responseFormat).toEqual({ type: 'json_schema', name: 'math', description: 'An answer', schema, strict: true, param: 'response_format' });
  });

  it('parses json_object, and text as no format at all', () => {
    expect(parse('chat', { response_format: { type: 'json_object' } }).responseFormat).toEqual({ type: 'json_object', param: 'response_format' });
    expect(parse('chat', { response_format: { type: 'text' } }).responseFormat).toBeUndefined();
    expect(parse('chat', {}).responseFormat).toBeUndefined();
  });

  it.each([
    [{ type: 'xml' }, 'response_format.type'],
    [{ type: 'json_schema' }, 'response_format.json_schema'],
    [{ type: 'json_schema', json_schema: { schema } }, 'response_format.json_schema.name'],
    [{ type: 'json_schema', json_schema: { name: 'has space', schema } }, 'response_format.json_schema.name'],
    [{ type: 'json_schema', json_schema: { name: 'x' } }, 'response_format.json_schema.schema'],
    [{ type: 'json_schema', json_schema: { name: 'x', schema: 'object' } }, 'response_format.json_schema.schema'],
    [{ type: 'json_schema', json_schema: { name: 'x', schema: { type: 5 } } }, 'response_format.json_schema.schema.type'],
    [{ type: 'json_schema', json_schema: { name: 'x', schema, strict: 'yes' } }, 'response_format.json_schema.strict'],
    ['json', 'response_format'],
  ])('refuses %j naming %s', (format, param) => {
    expect(rejection('chat', { response_format: format }).param).toBe(param);
  });

  it('refuses a schema that is too deep or too large, without overflowing the stack', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'array', items: deep };
    const tooDeep = rejection('chat', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: deep } } });
    expect(tooDeep.param).toBe('response_format.json_schema.schema');
    expect(tooDeep.message).toContain(`${MAX_SCHEMA_DEPTH} levels`);

    const big = { type: 'object', description: 'x'.repeat(MAX_SCHEMA_CHARS) };
    const tooBig = rejection('chat', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: big } } });
    expect(tooBig.param).toBe('response_format.json_schema.schema');
    expect(tooBig.message).toContain(`${MAX_SCHEMA_CHARS} characters`);
  });
});

describe('structured output: responses text.format', () => {
  it('parses json_schema with the fields flat beside type', () => {
    const request = parse('responses', { text: { format: { type: 'json_schema', name: 'math', schema, strict: true }, verbosity: 'low' } });
    expect(request.responseFormat).toEqual({ type: 'json_schema', name: 'math', schema, strict: true, param: 'text.format' });
  });

  it('parses json_object and text', () => {
    expect(parse('responses', { text: { format: { type: 'json_object' } } }).responseFormat).toEqual({ type: 'json_object', param: 'text.format' });
    expect(parse('responses', { text: { format: { type: 'text' } } }).responseFormat).toBeUndefined();
    expect(parse('responses', { text: {} }).responseFormat).toBeUndefined();
  });

  it.each([
    [{ format: { type: 'json_schema', schema } }, 'text.format.name'],
    [{ format: { type: 'json_schema', name: 'x', schema: [] } }, 'text.format.schema'],
    [{ format: { type: 'grammar' } }, 'text.format.type'],
    [{ format: 'json' }, 'text.format'],
  ])('refuses %j naming %s', (text, param) => {
    expect(rejection('responses', { text }).param).toBe(param);
  });

  it('echoes the format in the Response object, streamed and not, and text by default', () => {
    const format = { type: 'json_schema', name: 'math', schema, strict: true } as const;
    const request = parse('responses', { text: { format } });
    const rendered = clientFormat('responses').render(response({ text: '{"answer":4}' }), context({}, request)) as { text: unknown };
    expect(rendered.text).toEqual({ format });

    const frames = parseFrames(encodeAll(clientFormat('responses').createStreamEncoder(context({}, request)), eventsFor(response({ text: '{"answer":4}' }))));
    const created = frames.find((f) => f.event === 'response.created')?.data as { response: { text: unknown } };
    const completed = frames.find((f) => f.event === 'response.completed')?.data as { response: { text: unknown } };
    expect(created.response.text).toEqual({ format });
    expect(completed.response.text).toEqual({ format });

    const objectMode = parse('responses', { text: { format: { type: 'json_object' } } });
    expect((clientFormat('responses').render(response(), context({}, objectMode)) as { text: unknown }).text).toEqual({ format: { type: 'json_object' } });
    expect((clientFormat('responses').render(response(), context()) as { text: unknown }).text).toEqual({ format: { type: 'text' } });
  });
});

describe('structured output: messages output_config.format', () => {
  it('parses output_config.format beside effort', () => {
    const request = parse('messages', { output_config: { effort: 'low', format: { type: 'json_schema', schema } } });
    expect(request.responseFormat).toEqual({ type: 'json_schema', schema, param: 'output_config.format' });
  });

  it('accepts the older beta output_format', () => {
    expect(parse('messages', { output_format: { type: 'json_schema', schema } }).responseFormat).toEqual({
      type: 'json_schema',
      schema,
      param: 'output_format',
    });
  });

  it.each([
    [{ output_config: { format: { type: 'json_object' } } }, 'output_config.format.type'],
    [{ output_config: { format: { type: 'json_schema' } } }, 'output_config.format.schema'],
    [{ output_config: { format: { type: 'json_schema', schema: 1 } } }, 'output_config.format.schema'],
    [{ output_config: { format: { type: 'json_schema', schema } }, output_format: { type: 'json_schema', schema } }, 'output_format'],
  ])('refuses %j naming %s', (extra, param) => {
    expect(rejection('messages', extra).param).toBe(param);
  });
});
