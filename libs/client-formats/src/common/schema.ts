/**
 * The pieces the three formats' request and response schemas are built from, and the one place a
 * request schema becomes a validator.
 *
 * A schema is JSON Schema (2020-12, the dialect of OpenAPI 3.1) written with TypeBox: ajv compiles
 * it once at module load to check bodies, `/v1/openapi.json` publishes it as it is, and the
 * TypeScript types come from it (`Static<>`). The first problem ajv finds becomes a 400 in the
 * wording the formats have always used (`messages.0.role: must be one of ...`, `param` = the path).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { FreeObject, Literals, Maybe, Nullable } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';

type Json = Record<string, unknown>;

export { FreeObject, Literals, Maybe, Nullable };

/** A string, or an array of strings. */
export const StringOrStrings = (options: Json = {}) => Type.Unsafe<string | string[]>({ type: ['string', 'array'], items: { type: 'string' }, ...options });

/**
 * A string field that only steers the upstream (a display mode, an effort level): the values the
 * gateway knows are listed for readers (`examples`), and any other string is accepted too, so a
 * client newer than the gateway is not refused (forward-compatible parsing, docs/api.md).
 */
export const OpenLiterals = <const V extends readonly string[]>(known: V, options: Json = {}) =>
  // `string & {}` keeps the known values as hints without narrowing the type to them.
  Type.Unsafe<V[number] | (string & {})>({ type: 'string', examples: [...known], ...options });

/** A non-empty string. */
export const Id = (options: Json = {}) => Type.String({ minLength: 1, ...options });

/**
 * An object told apart by a string `tag` (`role`, `type`): one branch per value, each branch the
 * whole object. An unknown tag is refused naming every allowed value; the OpenAPI `discriminator`
 * says the same to readers.
 */
export function Tagged<T extends TSchema>(tag: string, branches: T[], options: Json = {}) {
  const values = branches.flatMap((branch) => tagValues(branch, tag));
  return Type.Unsafe<Static<T>>({
    type: 'object',
    required: [tag],
    properties: { [tag]: { type: 'string', enum: values } },
    discriminator: { propertyName: tag },
    oneOf: branches,
    ...options,
  });
}

function tagValues(branch: TSchema, tag: string): string[] {
  const property = ((branch as Json).properties as Record<string, Json>)[tag];
  return (property.enum as string[] | undefined) ?? [property.const as string];
}

/** The branch of `Tagged` for one or more tag values. */
export const Branch = <K extends string, const V extends readonly string[], P extends Record<string, TSchema>>(
  tag: K,
  values: V,
  properties: P,
  options: Json = {},
) => Type.Object({ [tag]: Literals(values), ...properties } as { [key in K]: TUnsafe<V[number]> } & P, options);

/** `if` the object's `tag` is `value`, `then` it must match `then` (a branch of an object whose tag may be left out). */
export const When = (tag: string, value: string, then: object) => ({ if: { properties: { [tag]: { const: value } }, required: [tag] }, then });

const ajv = new Ajv({ allErrors: false, verbose: true, discriminator: true, strict: false });

/** A compiled request schema: returns the body typed, or throws the 400 for its first problem. */
export type RequestValidator<T> = (body: unknown) => T;

/** Compiles once (call it at module load): the request hot path only runs the compiled function. */
export function compileRequestValidator<T extends TSchema>(schema: T): RequestValidator<Static<T>> {
  const validate: ValidateFunction = ajv.compile(schema as object);
  return (body) => {
    if (validate(body)) return body as Static<T>;
    throw toDomainError((validate.errors as ErrorObject[])[0], body);
  };
}

/**
 * Schema problems that need their own words: `x-message` on a schema replaces the generic message
 * of any of its keywords but `type` (a string), or of the keywords it names (an object); `{json}`
 * stands for the value sent as JSON, `{value}` for it as text.
 */
export const MESSAGE = 'x-message';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', integer: 'a integer' };

function toDomainError(error: ErrorObject, body: unknown): DomainError {
  const segments = error.instancePath.split('/').slice(1).map(unescape);
  if (segments.length === 0 && error.keyword === 'type') {
    return new DomainError(ErrorCode.InvalidRequest, `request body must be a JSON object, got ${describe(body)}`);
  }
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  const param = segments.join('.');
  return new DomainError(ErrorCode.InvalidRequest, `${param}: ${problem(error, segments)}`, param);
}

const unescape = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

function problem(error: ErrorObject, segments: string[]): string {
  const data = error.data;
  const schema = (error.parentSchema ?? {}) as Json;
  const own = schema[MESSAGE] as string | Record<string, string> | undefined;
  const custom = typeof own === 'string' ? (error.keyword === 'type' ? undefined : own) : own?.[error.keyword];
  if (custom !== undefined) return custom.replace('{json}', JSON.stringify(data)).replace('{value}', String(data));
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      // A required field sent as null was always "missing"; an array item is not a field.
      if (data === null && !/^\d+$/.test(segments[segments.length - 1] ?? '')) return 'is required';
      if (Array.isArray(schema.enum) && ([] as unknown[]).concat(schema.type).includes('string')) return oneOf(schema.enum, data);
      const types = ([] as string[]).concat(error.params.type as string | string[]).filter((type) => type !== 'null');
      const type = types[types.length - 1];
      if (type === 'integer' && typeof data === 'number') return `must be an integer, got ${data}`;
      return `must be ${ARTICLE[type] ?? `a ${type}`}, got ${describe(data)}`;
    }
    case 'enum':
      return oneOf(error.params.allowedValues as unknown[], data);
    case 'minLength':
    case 'minItems':
      return 'must not be empty';
    case 'maxItems':
      return `must have at most ${error.params.limit} items, got ${(data as unknown[]).length}`;
    case 'minimum':
      return `must be at least ${error.params.limit}, got ${data}`;
    case 'maximum':
      return `must be at most ${error.params.limit}, got ${data}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function oneOf(allowed: unknown[], data: unknown): string {
  const got = typeof data === 'string' ? `'${data}'` : describe(data);
  return `must be one of ${allowed
    .filter((value) => typeof value === 'string')
    .map((value) => `'${value}'`)
    .join(', ')}, got ${got}`;
}
