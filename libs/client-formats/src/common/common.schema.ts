/** Schema pieces more than one format uses. */
import { type Static, Type } from 'typebox';
import { FreeObject, Id, Maybe, MESSAGE, OpenLiterals } from './schema';
import { MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH } from './response-format';

/** The effort levels the gateway knows (`foldEffort` maps them onto the canonical three). */
export const EFFORT_LEVELS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/** An effort level: any string, since a new level only steers the upstream (see `foldEffort`). */
export const Effort = OpenLiterals(EFFORT_LEVELS, {
  description: `${EFFORT_LEVELS.map((level) => `\`${level}\``).join(', ')}; a level the gateway does not know turns reasoning on at the model's default effort.`,
});

export const Model = Id({
  description: 'A model id from `GET /v1/models`. The suffix `:reasoning-exclude` hides reasoning output; ids ending in `:dev` take DevPass keys only.',
  example: 'sim-chat',
});

/** `{name, description?, parameters?, strict?}`, as both OpenAI formats spell a function tool. */
export const FunctionDefinition = Type.Object({
  name: Id(),
  parameters: Maybe(FreeObject({ description: 'A JSON Schema object; leave it out for a function without arguments.' })),
  description: Maybe(Type.String()),
  strict: Maybe(
    Type.Boolean({
      description:
        'Hold the arguments to the schema exactly: sent to OpenAI-compatible upstreams as given. Responses echo it, `true` when left out (as OpenAI does).',
    }),
  ),
});
export type FunctionDefinition = Static<typeof FunctionDefinition>;

/** `web_search` (chat, responses): `false` is accepted; `true` is refused, since no model behind the gateway searches the web. */
export const WebSearch = Maybe(
  Type.Boolean({
    enum: [false],
    description: 'Accepted for compatibility; no web search is run, so `true` is refused.',
    [MESSAGE]: 'web search is not available on this gateway; send false or leave it out',
  }),
);

/** OpenAI's rule for a schema's `name`; Anthropic tool names accept the same characters. */
export const SchemaName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', [MESSAGE]: 'must be 1 to 64 letters, digits, underscores or dashes' });

/** A structured-output schema: an object; its depth and size are checked in code (`requireSchema`). */
export const JsonSchemaObject = FreeObject({
  description: `The JSON Schema the answer must match (an object; at most ${MAX_SCHEMA_DEPTH} levels deep and ${MAX_SCHEMA_CHARS.toLocaleString('en')} characters).`,
});

/** The fields of a `json_schema` structured-output format, with or without a required `name`. */
export const jsonSchemaFields = (nameRequired: boolean) => ({
  name: nameRequired ? SchemaName : Maybe(SchemaName),
  schema: JsonSchemaObject,
  description: Maybe(Type.String()),
  strict: Maybe(Type.Boolean()),
});

/** The whole JSON Schema of a `json_schema` format, as the request carried it. */
export interface JsonSchemaSpec {
  name?: string | null;
  schema: Record<string, unknown>;
  description?: string | null;
  strict?: boolean | null;
}
