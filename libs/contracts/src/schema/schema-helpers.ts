/**
 * The few TypeBox builders every wire-shape schema uses (the client formats' and the API's
 * other bodies): JSON Schema 2020-12, the dialect of OpenAPI 3.1, so `/v1/openapi.json`
 * publishes a schema as it is and `Static<>` gives the TypeScript type of the code that builds
 * (or reads) the body.
 */
import { type Static, type TSchema, Type } from 'typebox';

type Json = Record<string, unknown>;

/**
 * `T` or `null`. Written as a type list (`['number', 'null']`), so a bound or an enum keeps
 * applying to the value itself.
 */
export function Nullable<T extends TSchema>(schema: T, options: Json = {}) {
  const json = { ...(schema as Json), ...options };
  if (typeof json.type === 'string') json.type = [json.type, 'null'];
  else if (Array.isArray(json.type)) json.type = [...json.type, 'null'];
  if (Array.isArray(json.enum)) json.enum = [...json.enum, null];
  return Type.Unsafe<Static<T> | null>(json);
}

/** An optional field that may also be `null`. */
export const Maybe = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** One of a few strings, as an `enum` (one error naming every allowed value, in this order). */
export const Literals = <const V extends readonly string[]>(values: V, options: Json = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/** A free-form object: only its being an object is said. */
export const FreeObject = (options: Json = {}) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

/** An object of any keys, each value of schema `value` (`additionalProperties`, as OpenAPI readers expect a map). */
export const Dict = <T extends TSchema>(value: T, options: Json = {}) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options });
