import type { CanonicalRequest, ToolCall, ToolDefinition } from '@gateway/canonical';
import { hash32, hashHex } from './simulator-random';

/**
 * Which tools the simulator calls, and with what arguments:
 * - none when no tools are offered or `toolChoice` is 'none';
 * - `toolChoice: {name}` → that tool; 'required' → the tools the last user message names, else the first;
 * - otherwise only when the conversation ends with a user message that names tools (→ those,
 *   in the order offered) or says "tool"/"tools" (→ the first tool). After a tool result the
 *   simulator answers instead, unless a call is forced.
 */
export function chooseToolCalls(request: CanonicalRequest, lastUserText: string | undefined, seedKey: string): ToolCall[] {
  const tools = request.tools ?? [];
  if (tools.length === 0 || request.toolChoice === 'none') return [];
  const choice = request.toolChoice;
  let chosen: ToolDefinition[] = [];
  if (typeof choice === 'object') {
    chosen = [tools.find((tool) => tool.name === choice.name) ?? { name: choice.name, parameters: {} }];
  } else {
    const text = lastUserText ?? '';
    const named = lastUserText === undefined ? [] : tools.filter((tool) => mentions(text, tool.name));
    if (named.length > 0) chosen = named;
    else if (choice === 'required' || (lastUserText !== undefined && /\btools?\b/i.test(text))) chosen = [tools[0]];
  }
  return chosen.map((tool, index) => ({
    id: `call_sim_${hashHex(`${seedKey}\u0000${tool.name}\u0000${index}`)}`,
    name: tool.name,
    arguments: JSON.stringify(sampleArguments(tool.parameters)),
  }));
}

/** `name` appears in `text` as a whole identifier (so a tool called `a` does not match every "a"). */
function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}($|[^A-Za-z0-9_])`, 'i').test(text);
}

/** A JSON object matching the schema's `properties`, with deterministic sample values. */
export function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const value = sampleJson(schema);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A deterministic value valid against `schema` (any root type), `$ref`s resolved within it. */
export function sampleJson(schema: Record<string, unknown>): unknown {
  return sampleValue(schema, 'value', 0, schema);
}

/** Depth limit: schemas can be recursive, and sample data does not need to go deep. */
const MAX_DEPTH = 6;

/**
 * A sample value for one JSON-schema node: `const`, then the first `enum` value, then `default`,
 * then by type — strings `sample <name>` (or a value fitting `format`), integers from a hash of
 * the property name kept within minimum/maximum, booleans true, arrays of one item.
 */
function sampleValue(node: Record<string, unknown>, name: string, depth: number, root: Record<string, unknown>): unknown {
  const schema = depth < MAX_DEPTH ? resolved(node, root) : node;
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  if (schema['default'] !== undefined) return schema['default'];
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants) && variants.length > 0) return sampleValue(asSchema(variants[0]), name, depth + 1, root);
  switch (schemaType(schema)) {
    case 'string':
      return sampleString(schema, name);
    case 'integer':
      return sampleNumber(schema, name, 0);
    case 'number':
      return sampleNumber(schema, name, 0.5);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return depth >= MAX_DEPTH ? [] : sampleArray(schema, name, depth, root);
    case 'object':
    default:
      return depth >= MAX_DEPTH ? {} : sampleObject(schema, depth, root);
  }
}

/** `$ref` (`#`, `#/$defs/x`, `#/definitions/x`) followed, `allOf` parts merged into one schema. */
function resolved(schema: Record<string, unknown>, root: Record<string, unknown>): Record<string, unknown> {
  let current = schema;
  for (let hops = 0; typeof current['$ref'] === 'string' && hops < MAX_DEPTH; hops++) {
    const { $ref, ...rest } = current;
    current = { ...rest, ...pointer(root, $ref as string) };
  }
  const parts = current['allOf'];
  if (!Array.isArray(parts)) return current;
  const merged = { ...current };
  delete merged['allOf'];
  for (const part of parts.map((p) => resolved(asSchema(p), root))) {
    const properties = { ...asSchema(merged['properties']), ...asSchema(part['properties']) };
    Object.assign(merged, part, { properties });
  }
  return merged;
}

function pointer(root: Record<string, unknown>, ref: string): Record<string, unknown> {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const segment of ref.slice(1).split('/').filter(Boolean)) {
    node = asSchema(node)[decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return asSchema(node);
}

/** `prefixItems` each, then `items` up to `minItems` (at least one unless `maxItems` is 0). */
function sampleArray(schema: Record<string, unknown>, name: string, depth: number, root: Record<string, unknown>): unknown[] {
  const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'].map((item) => sampleValue(asSchema(item), name, depth + 1, root)) : [];
  const minItems = typeof schema['minItems'] === 'number' ? Math.min(schema['minItems'], 100) : 1;
  const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : Infinity;
  const count = Math.min(Math.max(minItems, prefix.length === 0 ? 1 : 0), maxItems) - prefix.length;
  const items =
    schema['items'] === false ? [] : Array.from({ length: Math.max(0, count) }, () => sampleValue(asSchema(schema['items']), name, depth + 1, root));
  return [...prefix, ...items];
}

function sampleObject(schema: Record<string, unknown>, depth: number, root: Record<string, unknown>): Record<string, unknown> {
  const properties = asSchema(schema['properties']);
  const result: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) result[key] = sampleValue(asSchema(property), key, depth + 1, root);
  return result;
}

/** The declared type; `["string", "null"]` counts as string. Untyped nodes with properties are objects, others strings. */
function schemaType(schema: Record<string, unknown>): string {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((entry): entry is string => typeof entry === 'string' && entry !== 'null') ?? 'null';
  return schema['properties'] ? 'object' : 'string';
}

const FORMAT_SAMPLES: Record<string, string> = {
  date: '2025-01-01',
  'date-time': '2025-01-01T00:00:00Z',
  time: '12:00:00',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function sampleString(schema: Record<string, unknown>, name: string): string {
  const format = schema['format'];
  let value = (typeof format === 'string' && FORMAT_SAMPLES[format]) || `sample ${name}`;
  const minLength = schema['minLength'];
  const maxLength = schema['maxLength'];
  if (typeof minLength === 'number' && value.length < minLength) value = value.padEnd(Math.min(minLength, 10_000), 'x');
  if (typeof maxLength === 'number' && value.length > maxLength) value = value.slice(0, Math.max(0, maxLength));
  return value;
}

function sampleNumber(schema: Record<string, unknown>, name: string, fraction: number): number {
  const integer = fraction === 0;
  let value = (hash32(name) % 100) + 1 + fraction;
  const step = integer ? 1 : 0.5;
  const bound = (key: string): number | undefined => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const minimum = bound('minimum') ?? (bound('exclusiveMinimum') !== undefined ? (bound('exclusiveMinimum') as number) + step : undefined);
  const maximum = bound('maximum') ?? (bound('exclusiveMaximum') !== undefined ? (bound('exclusiveMaximum') as number) - step : undefined);
  const multipleOf = bound('multipleOf');
  if (multipleOf !== undefined && multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf;
  if (maximum !== undefined && value > maximum) value = multipleOf ? Math.floor(maximum / multipleOf) * multipleOf : maximum;
  if (minimum !== undefined && value < minimum) value = multipleOf ? Math.ceil(minimum / multipleOf) * multipleOf : minimum;
  return integer ? Math.round(value) : value;
}

function asSchema(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
