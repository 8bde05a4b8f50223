/** `GET /v1/models`: the catalog as the spec lists it; the catalog builds its entries with this type. */
import { type Static, Type } from 'typebox';
import { FreeObject, Literals } from '../schema/schema-helpers';

const Strings = (options: Record<string, unknown> = {}) => Type.Optional(Type.Array(Type.String(), options));

/** Not every entry carries every field. */
export const ModelEntry = Type.Object({
  id: Type.String({ example: 'sim-chat' }),
  object: Literals(['model']),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  owned_by: Type.Optional(Type.String()),
  created: Type.Optional(Type.Integer({ description: 'Unix seconds.' })),
  tokens: Type.Optional(Type.Integer({ description: 'Context window, in tokens.' })),
  pricing: Type.Optional(
    Type.Object({
      input: Type.Number({ description: 'Credits per million input tokens.' }),
      output: Type.Number({ description: 'Credits per million output tokens.' }),
      cache_read: Type.Optional(Type.Number({ description: "Credits per million input tokens read from the provider's prompt cache; `input` when absent." })),
      cache_write: Type.Optional(Type.Number({ description: "Credits per million input tokens written to the provider's prompt cache; `input` when absent." })),
      per_item: Type.Optional(Type.Number({ description: 'Credits per generated item (an image, a video), for media models.' })),
      per_second: Type.Optional(Type.Number({ description: 'Credits per second of audio transcribed or translated, for audio models.' })),
      characters: Type.Optional(Type.Number({ description: 'Credits per million input characters (speech), charged when the upstream reports no tokens.' })),
    }),
  ),
  endpoints: Strings({ description: 'Usage route names the model serves, e.g. `chat.completions`.' }),
  premium_model: Type.Optional(Type.Boolean()),
  voices: Strings(),
  sizes: Strings(),
  qualities: Strings(),
  tags: Strings(),
  styles: Strings(),
  metadata: Type.Optional(FreeObject()),
});
export type ModelEntry = Static<typeof ModelEntry>;

export const ModelList = Type.Object({
  object: Literals(['list']),
  data: Type.Array(ModelEntry),
});
export type ModelList = Static<typeof ModelList>;
