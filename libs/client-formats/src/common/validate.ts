/**
 * Small validators for the three client request formats.
 *
 * Every check takes the dotted path of the field it looks at, so a failure can name the offending
 * field both in the human message (`messages.0.role: must be one of ...`) and in `param`, which is
 * what OpenAI-style 400 bodies carry. Unknown fields are never looked at, hence never rejected.
 */
import { ErrorCode } from '@gateway/contracts';
import { DomainError } from '@gateway/errors';

export type JsonObject = Record<string, unknown>;

/** Joins path segments: `path('messages', 0, 'role')` → `messages.0.role`. */
export function path(...segments: (string | number | undefined)[]): string {
  return segments.filter((s) => s !== undefined && s !== '').join('.');
}

/** Throws a 400 whose message starts with the field path and whose `param` is that path. */
export function fail(param: string, problem: string): never {
  throw new DomainError(ErrorCode.InvalidRequest, `${param}: ${problem}`, param);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireObject(value: unknown, param: string): JsonObject {
  if (!isObject(value)) fail(param, `must be an object, got ${describe(value)}`);
  return value;
}

/** The request body itself; its problems have no field to name, so `param` is empty. */
export function requireBody(body: unknown): JsonObject {
  if (!isObject(body)) {
    throw new DomainError(ErrorCode.InvalidRequest, `request body must be a JSON object, got ${describe(body)}`);
  }
  return body;
}

export function requireString(value: unknown, param: string, opts: { nonEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') fail(param, `must be a string, got ${describe(value)}`);
  if (opts.nonEmpty && value.length === 0) fail(param, 'must not be empty');
  return value;
}

export function optionalString(obj: JsonObject, key: string, base: string): string | undefined {
  const value = obj[key];
  return value === undefined || value === null ? undefined : requireString(value, path(base, key));
}

export function optionalBoolean(obj: JsonObject, key: string, base: string): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') fail(path(base, key), `must be a boolean, got ${describe(value)}`);
  return value;
}

export interface NumberRule {
  min?: number;
  max?: number;
  integer?: boolean;
}

export function requireNumber(value: unknown, param: string, rule: NumberRule = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    fail(param, `must be a ${rule.integer ? 'integer' : 'number'}, got ${describe(value)}`);
  }
  if (rule.integer && !Number.isInteger(value)) fail(param, `must be an integer, got ${value}`);
  if (rule.min !== undefined && value < rule.min) fail(param, `must be at least ${rule.min}, got ${value}`);
  if (rule.max !== undefined && value > rule.max) fail(param, `must be at most ${rule.max}, got ${value}`);
  return value;
}

export function optionalNumber(obj: JsonObject, key: string, base: string, rule: NumberRule = {}): number | undefined {
  const value = obj[key];
  return value === undefined || value === null ? undefined : requireNumber(value, path(base, key), rule);
}

export function requireArray(value: unknown, param: string, opts: { nonEmpty?: boolean; maxItems?: number } = {}): unknown[] {
  if (!Array.isArray(value)) fail(param, `must be an array, got ${describe(value)}`);
  if (opts.nonEmpty && value.length === 0) fail(param, 'must not be empty');
  if (opts.maxItems !== undefined && value.length > opts.maxItems) {
    fail(param, `must have at most ${opts.maxItems} items, got ${value.length}`);
  }
  return value;
}

export function optionalObject(obj: JsonObject, key: string, base: string): JsonObject | undefined {
  const value = obj[key];
  return value === undefined || value === null ? undefined : requireObject(value, path(base, key));
}

export function requireOneOf<T extends string>(value: unknown, allowed: readonly T[], param: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    const got = typeof value === 'string' ? `'${value}'` : describe(value);
    fail(param, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${got}`);
  }
  return value as T;
}

/** `stop`-like fields: a string or an array of strings, normalised to an array. */
export function stringOrStringArray(value: unknown, param: string, maxItems?: number): string[] {
  if (typeof value === 'string') return [value];
  return requireArray(value, param, { maxItems }).map((item, i) => requireString(item, path(param, i)));
}

/** A required model id, checked the same way in every format. */
export function requireModel(body: JsonObject): string {
  if (body.model === undefined || body.model === null) fail('model', 'is required');
  return requireString(body.model, 'model', { nonEmpty: true });
}
