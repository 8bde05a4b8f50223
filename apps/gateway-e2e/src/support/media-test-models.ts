/** Catalog entries for the media tests (see fake-openai-media.ts for what each upstream model does). */
export const FAKE_IMAGE_PER_ITEM = 0.05;
/** `fake-openai-image-tokens`: a GPT-image-like model priced by tokens (its per-item price applies only when no usage comes back). */
export const FAKE_IMAGE_TOKEN_PRICING = { input: 5, output: 40, per_item: 0.05, max_output_tokens: 4160 };
/** Credits per second of audio of the fake transcription models. */
export const FAKE_AUDIO_PER_SECOND = 0.006;

export function mediaTestModels(openaiRoute: (upstream: string) => object): Record<string, unknown>[] {
  const base = { owned_by: 'e2e', created: 1767225600 };
  const simulator = (upstream: string) => ({ adapter: 'simulator', upstream_model: upstream });
  return [
    {
      ...base,
      id: 'fake-openai-embed',
      tokens: 8192,
      pricing: { input: 1, output: 0 },
      endpoints: ['embeddings'],
      metadata: { dimensions: 8, max_dimensions: 64 },
      routes: [openaiRoute('embed')],
    },
    {
      ...base,
      id: 'fake-slow-embed',
      tokens: 8192,
      pricing: { input: 1, output: 0 },
      endpoints: ['embeddings'],
      routes: [openaiRoute('slow-embed')],
    },
    {
      ...base,
      id: 'fallback-embed',
      tokens: 8192,
      pricing: { input: 1, output: 0 },
      endpoints: ['embeddings'],
      routes: [openaiRoute('always-500'), simulator('sim-embed')],
    },
    { ...base, id: 'fake-openai-moderation', pricing: { input: 1, output: 0 }, endpoints: ['moderations'], routes: [openaiRoute('moderate')] },
    {
      ...base,
      id: 'fake-openai-image',
      pricing: { input: 0, output: 0, per_item: FAKE_IMAGE_PER_ITEM },
      endpoints: ['images.generations', 'images.edits'],
      sizes: ['256x256', '512x512', '1024x1024'],
      qualities: ['standard', 'hd'],
      max_images: 2,
      routes: [openaiRoute('painter')],
    },
    {
      ...base,
      id: 'fake-openai-image-tokens',
      pricing: { input: FAKE_IMAGE_TOKEN_PRICING.input, output: FAKE_IMAGE_TOKEN_PRICING.output, per_item: FAKE_IMAGE_TOKEN_PRICING.per_item },
      max_output_tokens: FAKE_IMAGE_TOKEN_PRICING.max_output_tokens,
      endpoints: ['images.generations', 'images.edits'],
      max_images: 2,
      routes: [openaiRoute('painter-tokens')],
    },
    {
      ...base,
      id: 'fake-openai-image-url',
      pricing: { input: 0, output: 0, per_item: FAKE_IMAGE_PER_ITEM },
      endpoints: ['images.generations'],
      max_images: 1,
      routes: [openaiRoute('painter-url')],
    },
    {
      ...base,
      id: 'reject-400-image',
      pricing: { input: 0, output: 0, per_item: 1 },
      endpoints: ['images.generations', 'images.edits'],
      routes: [openaiRoute('reject-400')],
    },
    {
      ...base,
      id: 'broken-image',
      pricing: { input: 0, output: 0, per_item: 1 },
      endpoints: ['images.generations', 'images.edits'],
      routes: [openaiRoute('always-500')],
    },
    ...(
      [
        ['fake-whisper', 'whisper-echo'],
        ['fake-whisper-silent', 'whisper-silent'],
        ['reject-400-whisper', 'reject-400'],
        ['broken-whisper', 'always-500'],
      ] as const
    ).map(([id, upstream]) => ({
      ...base,
      id,
      pricing: { input: 0, output: 0, per_second: FAKE_AUDIO_PER_SECOND },
      endpoints: ['audio.transcriptions', 'audio.translations'],
      routes: [openaiRoute(upstream)],
    })),
    // Priced by tokens (and by seconds when the upstream reports none).
    {
      ...base,
      id: 'fake-gpt-transcribe',
      pricing: { input: 2.5, output: 10, per_second: FAKE_AUDIO_PER_SECOND },
      endpoints: ['audio.transcriptions', 'audio.translations'],
      routes: [openaiRoute('whisper-tokens')],
    },
    {
      ...base,
      id: 'fake-gpt-transcribe-held',
      pricing: { input: 2.5, output: 10, per_second: FAKE_AUDIO_PER_SECOND },
      endpoints: ['audio.transcriptions'],
      routes: [openaiRoute('whisper-held-stream')],
    },
    ...speechTestModels(openaiRoute),
  ];
}

/** Speech: credits per million characters, or per million tokens when the upstream reports them. */
export const FAKE_SPEECH_PRICING = { input: 2, output: 10, characters: 15 };

function speechTestModels(openaiRoute: (upstream: string) => object): Record<string, unknown>[] {
  const base = { owned_by: 'e2e', created: 1767225600, pricing: FAKE_SPEECH_PRICING, endpoints: ['audio.speech'], max_output_tokens: 2000 };
  return [
    { ...base, id: 'fake-openai-tts', voices: ['alloy', 'nova'], routes: [openaiRoute('speaker')] },
    { ...base, id: 'reject-400-tts', routes: [openaiRoute('reject-400')] },
    { ...base, id: 'broken-tts', routes: [openaiRoute('always-500')] },
  ];
}
