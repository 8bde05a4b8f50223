/**
 * Structured-output requests in each client format → one canonical `ResponseFormat`, and its echo
 * in a Responses object. The schema is checked only for what a gateway must guard (it is an
 * object, bounded in depth and size); whether a model honours it is the provider's business.
 */
import type { ResponseFormat } from '@gateway/canonical';
import type { JsonSchemaSpec } from './common.schema';
import { fail, isObject, path, requireObject, requireString } from './validate';

/** Serialized size above which a schema is refused (OpenAI caps schemas at a similar size). */
export const MAX_SCHEMA_CHARS = 100_000;
/** Nesting depth (objects and arrays) above which a schema is refused. */
export const MAX_SCHEMA_DEPTH = 64;

type FormatChoice = { type: 'text' } | { type: 'json_object' } | ({ type: 'json_schema' } & JsonSchemaSpec);

/** Chat `response_format` (the schema under `json_schema`), already checked against the request schema. */
export function chatResponseFormat(format: { type: string; json_schema?: JsonSchemaSpec } | null | undefined): ResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  const param = 'response_format';
  if (format.type === 'json_object') return { type: 'json_object', param };
  return jsonSchemaFormat(format.json_schema as JsonSchemaSpec, path(param, 'json_schema'), param);
}

/** Responses `text.format`: the same three types, the schema's fields flat beside `type`. */
export function responsesTextFormat(format: FormatChoice | null | undefined): ResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  const param = 'text.format';
  if (format.type === 'json_object') return { type: 'json_object', param };
  return jsonSchemaFormat(format, param, param);
}

/**
 * Messages `output_config.format` (`{type: json_schema, schema}`), or the older beta
 * `output_format` of the same shape, which `client.beta.messages` still sends. Anthropic has no
 * JSON-object mode.
 */
export function messagesOutputFormat(current: JsonSchemaSpec | null | undefined, beta: JsonSchemaSpec | null | undefined): ResponseFormat | undefined {
  if (current && beta) fail('output_format', 'send either output_config.format or the older output_format, not both');
  const format = current ?? beta;
  if (!format) return undefined;
  const param = current ? 'output_config.format' : 'output_format';
  return jsonSchemaFormat(format, param, param);
}

function jsonSchemaFormat(spec: JsonSchemaSpec, at: string, param: string): ResponseFormat {
  const schema = requireSchema(spec.schema, path(at, 'schema'));
  const format: ResponseFormat = { type: 'json_schema', schema, param };
  if (spec.name !== undefined && spec.name !== null) format.name = spec.name;
  if (spec.description !== undefined && spec.description !== null) format.description = spec.description;
  if (spec.strict !== undefined && spec.strict !== null) format.strict = spec.strict;
  return format;
}

/**
 * A JSON schema is an object; its depth is measured without recursion (a deep body must not
 * overflow the stack) before its size is, since serializing recurses.
 */
export function requireSchema(value: unknown, param: string): Record<string, unknown> {
  const schema = requireObject(value, param);
  const stack: { node: unknown; depth: number }[] = [{ node: schema, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (depth > MAX_SCHEMA_DEPTH) fail(param, `is nested more than ${MAX_SCHEMA_DEPTH} levels deep`);
    const children = Array.isArray(node) ? node : isObject(node) ? Object.values(node) : [];
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
  }
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) fail(param, `must be at most ${MAX_SCHEMA_CHARS} characters as JSON`);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    types.forEach((type, i) => requireString(type, Array.isArray(schema.type) ? path(param, 'type', i) : path(param, 'type')));
  }
  return schema;
}

/** The `text` field of a Responses object: the format the request asked for, `{type: text}` by default. */
export function responsesTextField(format: ResponseFormat | undefined): { format: Record<string, unknown> } {
  if (!format) return { format: { type: 'text' } };
  if (format.type === 'json_object') return { format: { type: 'json_object' } };
  const echoed: Record<string, unknown> = { type: 'json_schema', name: format.name ?? 'response', schema: format.schema, strict: format.strict ?? false };
  if (format.description !== undefined) echoed.description = format.description;
  return { format: echoed };
}
