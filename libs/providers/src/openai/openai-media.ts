import { type MultipartPart } from '../multipart-body';
import { ModerationCategories, type ModerationCategory } from '@gateway/contracts';
import type { EmbeddingRequest, ImageEditRequest, ImageRequest, ImageUsage, ModerationResult, ModerationVerdict } from '@gateway/canonical';
import { asRecord, malformedResponse } from '../upstream-http';

/** `POST /embeddings`: the client's encoding is asked for upstream too; `dimensions` only when the client set it. */
export function toOpenAIEmbeddingsBody(request: EmbeddingRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, input: request.inputs, encoding_format: request.encoding };
  if (request.dimensionsRequested && request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.user) body.user = request.user;
  return body;
}

/** Little-endian float32, as OpenAI encodes `base64` embeddings. */
export function decodeBase64Floats(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw malformedResponse('a base64 embedding whose length is not a multiple of 4 bytes');
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

/**
 * The vectors in input order (by each item's `index`), whichever encoding the upstream used
 * (some OpenAI-compatible servers ignore `encoding_format`), and its `usage.prompt_tokens`.
 */
export function fromOpenAIEmbeddings(response: unknown, inputCount: number): { vectors: Float32Array[]; promptTokens?: number } {
  const data = asRecord(response)?.['data'];
  if (!Array.isArray(data) || data.length !== inputCount) {
    throw malformedResponse(`embeddings for ${Array.isArray(data) ? data.length : 'no'} of ${inputCount} inputs`, response);
  }
  const vectors: Float32Array[] = new Array(inputCount);
  for (const [position, item] of data.entries()) {
    const record = asRecord(item);
    const index = Number.isInteger(record?.['index']) ? (record!['index'] as number) : position;
    const embedding = record?.['embedding'];
    if (index < 0 || index >= inputCount || vectors[index]) throw malformedResponse(`an embedding with index ${index}`, response);
    if (typeof embedding === 'string') vectors[index] = decodeBase64Floats(embedding);
    else if (Array.isArray(embedding) && embedding.every((value) => typeof value === 'number')) vectors[index] = Float32Array.from(embedding);
    else throw malformedResponse('an embedding that is neither a number array nor base64', response);
  }
  const promptTokens = asRecord(asRecord(response)?.['usage'])?.['prompt_tokens'];
  return { vectors, promptTokens: Number.isSafeInteger(promptTokens) ? (promptTokens as number) : undefined };
}

/** The spec's 11 categories of one upstream result; categories the upstream added (e.g. `illicit`) are left out. */
function toVerdict(item: unknown, response: unknown): ModerationVerdict {
  const record = asRecord(item);
  const categories = asRecord(record?.['categories']);
  const scores = asRecord(record?.['category_scores']);
  if (!categories || !scores) throw malformedResponse('a moderation result without categories and category_scores', response);
  const verdict: ModerationVerdict = {
    flagged: false,
    categories: {} as Record<ModerationCategory, boolean>,
    category_scores: {} as Record<ModerationCategory, number>,
  };
  for (const category of ModerationCategories) {
    verdict.categories[category] = categories[category] === true;
    const score = scores[category];
    verdict.category_scores[category] = typeof score === 'number' && Number.isFinite(score) ? score : 0;
  }
  verdict.flagged = typeof record?.['flagged'] === 'boolean' ? (record['flagged'] as boolean) : Object.values(verdict.categories).some(Boolean);
  return verdict;
}

export function fromOpenAIModeration(response: unknown, inputCount: number): ModerationResult {
  const record = asRecord(response);
  const results = record?.['results'];
  if (!Array.isArray(results) || results.length !== inputCount) {
    throw malformedResponse(`moderation results for ${Array.isArray(results) ? results.length : 'no'} of ${inputCount} inputs`, response);
  }
  const id = record?.['id'];
  return { id: typeof id === 'string' ? id : undefined, results: results.map((item) => toVerdict(item, response)) };
}

/**
 * `POST /images/generations`, always asking for `b64_json`: the router stores the bytes itself so
 * that our URLs (public or signed) hold whatever the upstream's own URLs do. `quality` and
 * `style` are sent only when the client set them (not every image model takes them).
 */
export function toOpenAIImagesBody(request: ImageRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, prompt: request.prompt, n: request.n, size: request.size, response_format: 'b64_json' };
  if (request.explicit.quality) body.quality = request.quality;
  if (request.explicit.style) body.style = request.style;
  if (request.user) body.user = request.user;
  return body;
}

/**
 * The fields of `POST /images/edits` as OpenAI's SDK sends them, the images (`image`, or `image[]`
 * for several) and the mask streamed from the store; always asking for `b64_json`, as generations do.
 */
export function toOpenAIImageEditParts(request: ImageEditRequest, upstreamModel: string): MultipartPart[] {
  const parts: MultipartPart[] = request.images.map((file) => ({ name: request.images.length > 1 ? 'image[]' : 'image', file }));
  if (request.mask) parts.push({ name: 'mask', file: request.mask });
  const fields = toOpenAIImagesBody(request, upstreamModel);
  if (request.background !== undefined) fields.background = request.background;
  if (request.outputFormat !== undefined) fields.output_format = request.outputFormat;
  for (const [name, value] of Object.entries(fields)) parts.push({ name, value: String(value) });
  return parts;
}

/** Each image as base64 data, or as a URL to download when the upstream ignored `response_format`. */
export function fromOpenAIImages(response: unknown, expected: number): { b64?: string; url?: string; revisedPrompt?: string }[] {
  const data = asRecord(response)?.['data'];
  if (!Array.isArray(data) || data.length === 0 || data.length > expected) {
    throw malformedResponse(`${Array.isArray(data) ? data.length : 'no'} images for n = ${expected}`, response);
  }
  return data.map((item) => {
    const record = asRecord(item);
    const b64 = record?.['b64_json'];
    const url = record?.['url'];
    const revised = record?.['revised_prompt'];
    const image = { revisedPrompt: typeof revised === 'string' ? revised : undefined };
    if (typeof b64 === 'string' && b64.length > 0) return { ...image, b64 };
    if (typeof url === 'string' && /^https?:\/\//.test(url)) return { ...image, url };
    throw malformedResponse('an image with neither b64_json nor url', response);
  });
}

/**
 * The `usage` of an image answer (GPT image models: `{input_tokens, output_tokens, total_tokens,
 * input_tokens_details}`), when its token counts are whole and not negative; else none.
 */
export function imageUsageOf(response: unknown): ImageUsage | undefined {
  const usage = asRecord(asRecord(response)?.['usage']);
  const input = usage?.['input_tokens'];
  const output = usage?.['output_tokens'];
  if (!usage || !Number.isSafeInteger(input) || !Number.isSafeInteger(output) || (input as number) < 0 || (output as number) < 0) return undefined;
  return { inputTokens: input as number, outputTokens: output as number, raw: usage };
}

const SIGNATURES: { type: string; matches: (bytes: Buffer) => boolean }[] = [
  { type: 'image/png', matches: (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', matches: (bytes) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff },
  { type: 'image/webp', matches: (bytes) => bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/** The image's type from its first bytes; what an upstream claims is not trusted, since we serve it again. */
export function sniffImageType(bytes: Buffer): string {
  const match = SIGNATURES.find((signature) => signature.matches(bytes));
  if (!match) throw malformedResponse('an image that is not PNG, JPEG or WebP');
  return match.type;
}
