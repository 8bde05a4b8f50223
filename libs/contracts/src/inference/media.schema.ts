/**
 * The bodies of the media routes the router builds (embeddings, moderations) or the edge renders
 * from the router's answer (images), relayed to the client as they are: the schemas
 * `/v1/openapi.json` publishes and the types of the code that builds them.
 */
import { type Static, Type } from 'typebox';
import { Literals } from '../schema/schema-helpers';
import { ModerationCategories, type ModerationCategory } from './media.messages';

export const Embedding = Type.Object({
  object: Literals(['embedding']),
  embedding: Type.Unsafe<number[] | string>({
    oneOf: [
      { type: 'array', items: { type: 'number' }, description: '`encoding_format: float` (the default).' },
      { type: 'string', format: 'byte', description: "`encoding_format: base64`: the vector's little-endian float32 bytes." },
    ],
    description: 'The vector: the same float32 values in either encoding.',
  }),
  index: Type.Integer({ minimum: 0, description: "The input's position in `input`." }),
});

export const EmbeddingList = Type.Object({
  object: Literals(['list']),
  data: Type.Array(Embedding, { description: 'One per input, in input order.' }),
  model: Type.String({ example: 'sim-embed' }),
  usage: Type.Object({
    prompt_tokens: Type.Integer({ description: "The upstream's count of input tokens, or gpt-tokenizer's when it reports none." }),
    total_tokens: Type.Integer({ description: 'Equal to `prompt_tokens`.' }),
  }),
});
export type EmbeddingList = Static<typeof EmbeddingList>;

/** An object with one property per moderation category, each of schema `value`. */
const perCategory = <V>(value: object, description: string) =>
  Type.Unsafe<Record<ModerationCategory, V>>({
    type: 'object',
    required: [...ModerationCategories],
    properties: Object.fromEntries(ModerationCategories.map((category) => [category, value])),
    description,
  });

export const ModerationVerdict = Type.Object({
  flagged: Type.Boolean({ description: 'Whether any category applies.' }),
  categories: perCategory<boolean>({ type: 'boolean' }, 'Whether each category applies (its score is 0.5 or more for the simulator).'),
  category_scores: perCategory<number>({ type: 'number', minimum: 0, maximum: 1 }, 'A score from 0 to 1 per category.'),
});

export const ModerationResult = Type.Object({
  id: Type.String({ example: 'modr-…' }),
  model: Type.String({ example: 'sim-moderation' }),
  results: Type.Array(ModerationVerdict, { description: 'One per input, in input order.' }),
});
export type ModerationResult = Static<typeof ModerationResult>;

export const ImageResultItem = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        format: 'uri',
        description:
          '`response_format: url`: `<PUBLIC_BASE_URL>/files/images/<uuid>.png`; unless the image is `public`, signed (`expires`, `signature`) and valid for `FILE_URL_TTL_SECONDS`.',
      }),
    ),
    b64_json: Type.Optional(Type.String({ format: 'byte', description: '`response_format: b64_json`: the image data, base64.' })),
    revised_prompt: Type.Optional(Type.String({ description: 'The prompt the upstream actually used, when it rewrote it.' })),
  },
  { description: 'Either `url` or `b64_json`, as `response_format` asked.' },
);
export type ImageResultItem = Static<typeof ImageResultItem>;

export const ImageGenerationResult = Type.Object({
  created: Type.Integer({ description: 'Unix seconds.' }),
  data: Type.Array(ImageResultItem, { description: '`n` images.' }),
  usage: Type.Optional(
    Type.Object(
      {
        input_tokens: Type.Integer({ minimum: 0 }),
        output_tokens: Type.Integer({ minimum: 0 }),
        total_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
        input_tokens_details: Type.Optional(
          Type.Object({ text_tokens: Type.Optional(Type.Integer({ minimum: 0 })), image_tokens: Type.Optional(Type.Integer({ minimum: 0 })) }),
        ),
      },
      {
        description:
          "The upstream's token usage, as it reported it (GPT image models do); absent when it reported none. When present and the model prices tokens, the request was billed by these tokens instead of per image.",
      },
    ),
  ),
});
export type ImageGenerationResult = Static<typeof ImageGenerationResult>;
