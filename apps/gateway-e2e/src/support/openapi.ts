/**
 * Reading the gateway's OpenAPI document the way a client generator would: follow `$ref`s, and
 * check a real response body against the schema the document gives for it.
 */
type Json = Record<string, any>;

export type OpenApiDocument = Json & { openapi: string; paths: Record<string, Json> };

export function resolve(document: OpenApiDocument, schema: Json): Json {
  let current = schema;
  while (typeof current?.$ref === 'string') {
    const target: Json | undefined = current.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Json | undefined, key: string) => node?.[key], document);
    if (target === undefined) throw new Error(`unresolved reference ${current.$ref}`);
    current = target;
  }
  return current;
}

export function operation(document: OpenApiDocument, method: string, path: string): Json {
  const found = document.paths[path]?.[method.toLowerCase()];
  if (!found) throw new Error(`the document has no ${method} ${path}`);
  return found;
}

export function requestSchema(document: OpenApiDocument, method: string, path: string): Json {
  return resolve(document, operation(document, method, path).requestBody.content['application/json'].schema);
}

export function responseSchema(document: OpenApiDocument, method: string, path: string, status: number): Json {
  return resolve(document, operation(document, method, path).responses[status].content['application/json'].schema);
}

/** The property names of an object schema, following `$ref`s and `allOf`. */
export function propertyNames(document: OpenApiDocument, schema: Json): string[] {
  const resolved = resolve(document, schema);
  const own = Object.keys(resolved.properties ?? {});
  return [...own, ...(resolved.allOf ?? []).flatMap((part: Json) => propertyNames(document, part))];
}

const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

/**
 * Where a value breaks its schema: wrong types, missing required fields, and fields the schema does
 * not name (documented objects are read as closed unless they allow additional properties).
 * Covers the JSON Schema the gateway's document uses, not all of JSON Schema.
 */
export function schemaProblems(document: OpenApiDocument, value: unknown, schema: Json, at = '$'): string[] {
  const resolved = resolve(document, schema);
  if (resolved.oneOf || resolved.anyOf) {
    const alternatives: Json[] = resolved.oneOf ?? resolved.anyOf;
    return alternatives.some((alternative) => schemaProblems(document, value, alternative, at).length === 0)
      ? []
      : [`${at}: matches none of the documented alternatives`];
  }
  if (resolved.allOf) return resolved.allOf.flatMap((part: Json) => schemaProblems(document, value, part, at));
  const types: string[] | undefined = resolved.type === undefined ? undefined : [resolved.type].flat();
  const actual = typeOf(value);
  if (types && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    return [`${at}: is ${actual}, documented as ${types.join(' or ')}`];
  }
  if (resolved.enum && !resolved.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(resolved.enum)}`];
  if (actual === 'array' && resolved.items) {
    return (value as unknown[]).flatMap((item, i) => schemaProblems(document, item, resolved.items, `${at}[${i}]`));
  }
  if (actual !== 'object') return [];
  const object = value as Json;
  const properties: Json = resolved.properties ?? {};
  const problems = (resolved.required ?? []).filter((key: string) => !(key in object)).map((key: string) => `${at}.${key}: missing`);
  for (const [key, item] of Object.entries(object)) {
    const itemSchema = properties[key] ?? (typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : undefined);
    if (itemSchema) problems.push(...schemaProblems(document, item, itemSchema, `${at}.${key}`));
    else if (resolved.additionalProperties !== true && resolved.properties) problems.push(`${at}.${key}: not documented`);
  }
  return problems;
}
