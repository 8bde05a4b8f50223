/**
 * Structured-output requests in each client format → one canonical `ResponseFormat`, and its echo
 * in a Responses object. The schema is checked only for what a gateway must guard (it is an
 * object, bounded in depth and size); whether a model honours it is the provider's business.
 */
import type { ResponseFormat } from '@gateway/canonical';
import { fail, isObject, type JsonObject, optionalBoolean, optionalObject, optionalString, path, requireObject, requireOneOf, requireString } from './validate';

/** Serialized size above which a schema is refused (OpenAI caps schemas at a similar size). */
export const MAX_SCHEMA_CHARS = 100_000;
/** Nesting depth (objects and arrays) above which a schema is refused. */
export const MAX_SCHEMA_DEPTH = 64;
/** OpenAI's rule for `json_schema.name`; Anthropic tool names accept the same characters. */
const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Chat `response_format`: `{type: text}`, `{type: json_object}` or `{type: json_schema, json_schema: {name, schema, strict?, description?}}`. */
export function parseChatResponseFormat(body: JsonObject): ResponseFormat | undefined {
  const format = optionalObject(body, 'response_format', '');
  if (!format) return undefined;
  const param = 'response_format';
  const type = requireOneOf(format.type, ['text', 'json_object', 'json_schema'] as const, path(param, 'type'));
  if (type === 'text') return undefined;
  if (type === 'json_object') return { type, param };
  const spec = requireObject(format.json_schema, path(param, 'json_schema'));
  return jsonSchemaFormat(spec, path(param, 'json_schema'), param, true);
}

/** Responses `text.format`: the same three types, the schema's fields flat beside `type`. */
export function parseResponsesTextFormat(body: JsonObject): ResponseFormat | undefined {
  const text = optionalObject(body, 'text', '');
  const format = text ? optionalObject(text, 'format', 'text') : undefined;
  if (!format) return undefined;
  const param = 'text.format';
  const type = requireOneOf(format.type, ['text', 'json_object', 'json_schema'] as const, path(param, 'type'));
  if (type === 'text') return undefined;
  if (type === 'json_object') return { type, param };
  return jsonSchemaFormat(format, param, param, true);
}

/**
 * Messages `output_config.format` (`{type: json_schema, schema}`), or the older beta
 * `output_format` of the same shape, which `client.beta.messages` still sends. Anthropic has no
 * JSON-object mode.
 */
export function parseMessagesOutputFormat(body: JsonObject): ResponseFormat | undefined {
  const config = optionalObject(body, 'output_config', '');
  const current = config ? optionalObject(config, 'format', 'output_config') : undefined;
  const beta = optionalObject(body, 'output_format', '');
  if (current && beta) fail('output_format', 'send either output_config.format or the older output_format, not both');
  const format = current ?? beta;
  if (!format) return undefined;
  const param = current ? 'output_config.format' : 'output_format';
  requireOneOf(format.type, ['json_schema'] as const, path(param, 'type'));
  return jsonSchemaFormat(format, param, param, false);
}

function jsonSchemaFormat(spec: JsonObject, at: string, param: string, nameRequired: boolean): ResponseFormat {
  if (nameRequired && (spec.name === undefined || spec.name === null)) fail(path(at, 'name'), 'is required');
  const name = optionalString(spec, 'name', at);
  if (name !== undefined && !SCHEMA_NAME.test(name)) {
    fail(path(at, 'name'), 'must be 1 to 64 letters, digits, underscores or dashes');
  }
  if (spec.schema === undefined || spec.schema === null) fail(path(at, 'schema'), 'is required');
  const schema = requireSchema(spec.schema, path(at, 'schema'));
  const format: ResponseFormat = { type: 'json_schema', schema, param };
  if (name !== undefined) format.name = name;
  const description = optionalString(spec, 'description', at);
  if (description !== undefined) format.description = description;
  const strict = optionalBoolean(spec, 'strict', at);
  if (strict !== undefined) format.strict = strict;
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
