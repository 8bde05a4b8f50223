import type { OpenAPIObject } from '@nestjs/swagger';

type Json = Record<string, any>;

const SCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SCHEMA_VALUES = ['items', 'additionalProperties', 'not', 'propertyNames', 'contains', 'if', 'then', 'else', 'unevaluatedProperties'];

/**
 * @nestjs/swagger writes schemas in OpenAPI 3.0's dialect even when the document says 3.1. This
 * rewrites the parts 3.1 (JSON Schema 2020-12) spells differently: `nullable` becomes a `null`
 * type, boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers.
 */
export function toOpenApi31(document: OpenAPIObject): OpenAPIObject {
  const components = document.components ?? {};
  for (const schema of Object.values(components.schemas ?? {})) visitSchema(schema);
  for (const holder of [...Object.values(components.parameters ?? {}), ...Object.values(components.headers ?? {})]) visitHolder(holder);
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Json)) {
      if (typeof operation !== 'object' || operation === null || Array.isArray(operation)) continue;
      for (const parameter of operation.parameters ?? []) visitHolder(parameter);
      visitContent(operation.requestBody?.content);
      for (const response of Object.values((operation.responses ?? {}) as Json)) {
        visitContent(response.content);
        for (const header of Object.values((response.headers ?? {}) as Json)) visitHolder(header);
      }
    }
  }
  return document;
}

function visitHolder(holder: Json): void {
  if (holder?.schema) visitSchema(holder.schema);
  visitContent(holder?.content);
}

function visitContent(content: Json | undefined): void {
  for (const media of Object.values(content ?? {})) if (media?.schema) visitSchema(media.schema);
}

function visitSchema(schema: Json): void {
  if (typeof schema !== 'object' || schema === null) return;
  for (const key of SCHEMA_LISTS) for (const child of schema[key] ?? []) visitSchema(child);
  for (const key of SCHEMA_MAPS) for (const child of Object.values(schema[key] ?? {})) visitSchema(child as Json);
  for (const key of SCHEMA_VALUES) visitSchema(schema[key]);
  rewriteNullable(schema);
  rewriteExclusive(schema, 'exclusiveMinimum', 'minimum');
  rewriteExclusive(schema, 'exclusiveMaximum', 'maximum');
}

function rewriteNullable(schema: Json): void {
  if (!('nullable' in schema)) return;
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) return;
  const composed = ['$ref', 'allOf', 'anyOf'].filter((key) => key in schema);
  if (composed.length > 0) {
    // A $ref or composition (swagger writes `{type: object, allOf: [{$ref}]}`): keep it as one
    // alternative and null as the other.
    const alternative: Json = {};
    for (const key of composed) {
      alternative[key] = schema[key];
      delete schema[key];
    }
    delete schema.type;
    schema.oneOf = [alternative, { type: 'null' }];
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  else if (Array.isArray(schema.type) && !schema.type.includes('null')) schema.type.push('null');
  else if (Array.isArray(schema.oneOf)) schema.oneOf.push({ type: 'null' });
}

function rewriteExclusive(schema: Json, exclusive: 'exclusiveMinimum' | 'exclusiveMaximum', bound: 'minimum' | 'maximum'): void {
  if (typeof schema[exclusive] !== 'boolean') return;
  if (schema[exclusive] && typeof schema[bound] === 'number') {
    schema[exclusive] = schema[bound];
    delete schema[bound];
  } else {
    delete schema[exclusive];
  }
}
