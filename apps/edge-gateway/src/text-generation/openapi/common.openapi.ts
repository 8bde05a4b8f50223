/** Pieces the three formats' schemas share. */

export const EFFORT_LEVELS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

export const MODEL_DESCRIPTION =
  'A model id from `GET /v1/models`. The suffix `:reasoning-exclude` hides reasoning output; ids ending in `:dev` take DevPass keys only.';

export const JSON_SCHEMA_OBJECT = { type: 'object', additionalProperties: true, description: 'A JSON Schema object.' } as const;

export const STRING_OR_STRINGS = (maxItems?: number) => ({
  oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, ...(maxItems ? { maxItems } : {}) }],
});
