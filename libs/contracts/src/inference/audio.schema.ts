import { Type, type Static } from 'typebox';

export const TranscriptionUsage = Type.Union(
  [
    Type.Object({
      type: Type.Literal('duration'),
      seconds: Type.Number({ description: 'Seconds of audio billed.' }),
    }),
    Type.Object({
      type: Type.Literal('tokens'),
      input_tokens: Type.Integer(),
      output_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
  ],
  { description: "What the request is billed for: the upstream's tokens, else seconds of audio (the upstream's, else the file's duration)." },
);

export const TranscriptionResult = Type.Object(
  {
    text: Type.String(),
    task: Type.Optional(Type.String({ description: '`verbose_json`: `transcribe` or `translate`.' })),
    language: Type.Optional(Type.String({ description: '`verbose_json`.' })),
    duration: Type.Optional(Type.Number({ description: "`verbose_json`: the audio's seconds." })),
    segments: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: '`verbose_json`.' })),
    words: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: '`verbose_json` with `timestamp_granularities[]=word`.' })),
    usage: Type.Optional(TranscriptionUsage),
  },
  { description: '`json` and `verbose_json` answers; `text`, `srt` and `vtt` are plain text (`text/plain`).' },
);
export type TranscriptionResult = Static<typeof TranscriptionResult>;
