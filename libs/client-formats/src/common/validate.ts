/**
 * Small checks for what the request schemas do not cover (stored-response references, structured
 * output schemas) and for the edge, which reads `model` before the router parses the body.
 *
 * Every check takes the dotted path of the field it looks at, so a failure can name the offending
 * field both in the human message (`messages.0.role: must be one of ...`) and in `param`, which is
 * what OpenAI-style 400 bodies carry. Unknown fields are never looked at, hence never rejected.
 */
import { DomainError, ErrorCode } from '@gateway/errors';

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

/** A required model id, checked the same way in every format. */

/** A required model id, checked as the request schemas check it. */
export function requireModel(body: JsonObject): string {
  if (body.model === undefined || body.model === null) fail('model', 'is required');
  return requireString(body.model, 'model', { nonEmpty: true });
}
