import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';

// class-transformer exports its @Type() registry only from this path, without typings.
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

type JsonSchema = Record<string, unknown>;

const REF = '#/definitions/';

let definitions: Record<string, JsonSchema> | undefined;

/**
 * The JSON schema of a class-validator DTO, generated from its decorators (the DTO stays the one
 * source of a NATS payload's rules): every DTO's schema under `definitions`, the requested one at
 * the top. An optional property may also be null, as `@IsOptional()` allows. Generated on first
 * use, after every contract class has been declared.
 */
export function contractSchema(dto: abstract new (...args: never[]) => object): JsonSchema {
  if (!definitions) {
    const schemas = validationMetadatasToSchemas({ classTransformerMetadataStorage: defaultMetadataStorage, refPointerPrefix: REF }) as Record<
      string,
      JsonSchema
    >;
    definitions = nullableOptionals(schemas);
    for (const schema of Object.values(schemas)) dropUnknownRefs(schema, schemas);
  }
  const schema = definitions[dto.name];
  if (!schema) throw new Error(`${dto.name} declares no class-validator rule: no schema can be generated for it`);
  return { ...schema, definitions };
}

function nullableOptionals(schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  for (const schema of Object.values(schemas)) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, property] of Object.entries(properties)) {
      if (!required.has(name)) properties[name] = { anyOf: [property, { type: 'null' }] };
    }
  }
  return schemas;
}

/**
 * A nested value whose class the DTO does not name (`@ValidateNested()` on an array or a plain
 * type) is checked by its own DTO where it has one: here it is any value, as for class-validator.
 */
function dropUnknownRefs(node: unknown, schemas: Record<string, JsonSchema>): void {
  if (typeof node !== 'object' || node === null) return;
  const record = node as JsonSchema;
  if (typeof record.$ref === 'string' && !(record.$ref.slice(REF.length) in schemas)) delete record.$ref;
  for (const value of Object.values(record)) dropUnknownRefs(value, schemas);
}
