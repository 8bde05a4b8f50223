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

/**
 * Tool arguments: a JSON object with the schema's required properties only, with deterministic
 * values of the declared types. Real tools treat an optional argument as a request (Claude Code's
 * `Read` with `pages` reads a PDF's pages), so none is sent that the schema does not require.
 */
export function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const value = sampleJson(schema, { requiredOnly: true });
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export interface SampleOptions {
  /** Objects get their `required` properties only (at every depth), else every declared property. */
  requiredOnly?: boolean;
}

/** A deterministic value valid against `schema` (any root type), `$ref`s resolved within it. */
export function sampleJson(schema: Record<string, unknown>, options: SampleOptions = {}): unknown {
  return sampleValue(schema, 'value', 0, { root: schema, requiredOnly: options.requiredOnly === true });
}

interface SampleContext {
  root: Record<string, unknown>;
  requiredOnly: boolean;
}

/** Depth limit: schemas can be recursive, and sample data does not need to go deep. */
const MAX_DEPTH = 6;

/**
 * A sample value for one JSON-schema node: `const`, then the first `enum` value, then `default`,
 * then by type — strings `sample <name>` (or a value fitting `format`), numbers whole (from a hash
 * of the property name, kept within the bounds: a parser that wants an integer for a `number`
 * still takes it), booleans true, arrays of one item, objects recursively.
 */
function sampleValue(node: Record<string, unknown>, name: string, depth: number, context: SampleContext): unknown {
  const schema = depth < MAX_DEPTH ? resolved(node, context.root) : node;
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  if (schema['default'] !== undefined) return schema['default'];
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants) && variants.length > 0) return sampleValue(asSchema(variants[0]), name, depth + 1, context);
  switch (schemaType(schema)) {
    case 'string':
      return sampleString(schema, name);
    case 'integer':
      return sampleNumber(schema, name, true);
    case 'number':
      return sampleNumber(schema, name, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return depth >= MAX_DEPTH ? [] : sampleArray(schema, name, depth, context);
    case 'object':
    default:
      return depth >= MAX_DEPTH ? {} : sampleObject(schema, depth, context);
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
function sampleArray(schema: Record<string, unknown>, name: string, depth: number, context: SampleContext): unknown[] {
  const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'].map((item) => sampleValue(asSchema(item), name, depth + 1, context)) : [];
  const minItems = typeof schema['minItems'] === 'number' ? Math.min(schema['minItems'], 100) : 1;
  const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : Infinity;
  const count = Math.min(Math.max(minItems, prefix.length === 0 ? 1 : 0), maxItems) - prefix.length;
  const items =
    schema['items'] === false ? [] : Array.from({ length: Math.max(0, count) }, () => sampleValue(asSchema(schema['items']), name, depth + 1, context));
  return [...prefix, ...items];
}

function sampleObject(schema: Record<string, unknown>, depth: number, context: SampleContext): Record<string, unknown> {
  const properties = asSchema(schema['properties']);
  const required = Array.isArray(schema['required']) ? schema['required'].filter((key): key is string => typeof key === 'string') : [];
  const keys = context.requiredOnly ? required : [...new Set([...Object.keys(properties), ...required])];
  const result: Record<string, unknown> = {};
  for (const key of keys) result[key] = sampleValue(asSchema(properties[key]), key, depth + 1, context);
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
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  'uri-reference': '/',
  duration: 'PT1M',
  regex: '.*',
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

/**
 * A whole number within the bounds (stepped to `multipleOf`); a `number` whose bounds hold no whole
 * number gets their midpoint.
 */
function sampleNumber(schema: Record<string, unknown>, name: string, integer: boolean): number {
  const bound = (key: string): number | undefined => (typeof schema[key] === 'number' && Number.isFinite(schema[key]) ? (schema[key] as number) : undefined);
  const minimum = bound('minimum');
  const maximum = bound('maximum');
  const exclusiveMinimum = bound('exclusiveMinimum');
  const exclusiveMaximum = bound('exclusiveMaximum');
  const low = Math.ceil(Math.max(minimum ?? -Infinity, exclusiveMinimum !== undefined ? Math.floor(exclusiveMinimum) + 1 : -Infinity));
  const high = Math.floor(Math.min(maximum ?? Infinity, exclusiveMaximum !== undefined ? Math.ceil(exclusiveMaximum) - 1 : Infinity));
  const multipleOf = bound('multipleOf');
  let value = (hash32(name) % 100) + 1;
  if (multipleOf !== undefined && multipleOf > 0) {
    value = Math.ceil(value / multipleOf) * multipleOf;
    if (value > high) value = Math.floor(high / multipleOf) * multipleOf;
    if (value < low) value = Math.ceil(low / multipleOf) * multipleOf;
  } else {
    value = Math.min(Math.max(value, low), high);
  }
  if (!integer && low > high) {
    const lower = minimum ?? exclusiveMinimum ?? 0;
    const upper = maximum ?? exclusiveMaximum ?? lower + 1;
    value = (lower + upper) / 2;
  }
  return value;
}

function asSchema(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
