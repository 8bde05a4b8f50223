/**
 * The fake OpenAI upstream's embeddings, moderations and images endpoints, keyed by upstream model:
 * - `POST /v1/embeddings`, `embed`: one vector per input of `dimensions` (default 8) components,
 *   multiples of 1/8 derived from the input (exact in float32), as floats or base64 as asked;
 *   `usage.prompt_tokens` counts words.
 * - `POST /v1/moderations`, `moderate`: one result per input with OpenAI's 13 categories (the 11
 *   of the spec plus `illicit` and `illicit/violent`); an input containing FAKE_FLAG_WORD is
 *   flagged as harassment (score 0.93), every other score is 0.01.
 * - `POST /v1/images/generations`, `painter`: `n` black PNGs of `size`, as b64_json or as URLs
 *   (`GET /files/<id>.png`) per `response_format`; `painter-url` always answers URLs. Each has
 *   `revised_prompt` = FAKE_REVISED_PREFIX + prompt.
 * - `painter-tokens` (generations and edits): as `painter`, b64_json, with FAKE_IMAGE_USAGE as its
 *   `usage` (what GPT image models report).
 * - `POST /v1/images/edits`, `painter` / `painter-tokens`: `n` black PNGs of `size`.
 * - `POST /v1/embeddings`, `slow-embed`: as `embed`, answered after SLOW_EMBED_MS.
 * - `always-500` on any of them: HTTP 500; `reject-400`: HTTP 400 with REJECT_400_MESSAGE.
 */
import type { ServerResponse } from 'node:http';
import { PNG } from 'pngjs';
import type { RecordedRequest } from './fake-upstreams';
import { speech } from './fake-openai-speech';

export const FAKE_FLAG_WORD = 'fakeflagged';
export const FAKE_REVISED_PREFIX = 'Revised by the fake upstream: ';
export const FAKE_EMBED_DEFAULT_DIMENSIONS = 8;
export const SLOW_EMBED_MS = 6_000;
/** The `usage` `painter-tokens` reports for every image answer. */
export const FAKE_IMAGE_USAGE = { total_tokens: 1370, input_tokens: 330, output_tokens: 1040, input_tokens_details: { text_tokens: 10, image_tokens: 320 } };
export const REJECT_400_MESSAGE = 'fake-upstream rejected the request: this prompt is not allowed';

const OPENAI_CATEGORIES = [
  'sexual',
  'hate',
  'harassment',
  'self-harm',
  'sexual/minors',
  'hate/threatening',
  'violence/graphic',
  'self-harm/intent',
  'self-harm/instructions',
  'harassment/threatening',
  'violence',
  'illicit',
  'illicit/violent',
];

const files = new Map<string, Buffer>();

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** The vector the fake gives `text`: component i is ((code-unit sum + 7i) mod 13 − 6) / 8. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const sum = [...text].reduce((total, char) => total + char.charCodeAt(0), 0);
  return Array.from({ length: dimensions }, (_, i) => (((sum + 7 * i) % 13) - 6) / 8);
}

const inputsOf = (input: unknown): string[] => (Array.isArray(input) ? input.map(String) : [String(input ?? '')]);

/** Answers the shared failure models; true when it did. */
function failed(model: string, response: ServerResponse): boolean {
  if (model === 'always-500') sendJson(response, 500, { error: { message: 'fake-upstream internal failure', type: 'server_error' } });
  else if (model === 'reject-400') sendJson(response, 400, { error: { message: REJECT_400_MESSAGE, type: 'invalid_request_error', param: null, code: null } });
  else return false;
  return true;
}

function unknownModel(model: string, response: ServerResponse): void {
  sendJson(response, 404, { error: { message: `The model '${model}' does not exist`, type: 'invalid_request_error', code: 'model_not_found' } });
}

function embeddings(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body ?? {};
  const model = String(body.model ?? '');
  if (failed(model, response)) return;
  if (model === 'slow-embed') {
    setTimeout(() => embeddings({ ...request, body: { ...body, model: 'embed' } }, response), SLOW_EMBED_MS);
    return;
  }
  if (model !== 'embed') return unknownModel(model, response);
  const inputs = inputsOf(body.input);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : FAKE_EMBED_DEFAULT_DIMENSIONS;
  const data = inputs.map((input, index) => {
    const vector = fakeEmbedding(input, dimensions);
    if (body.encoding_format !== 'base64') return { object: 'embedding', index, embedding: vector };
    const bytes = Buffer.alloc(vector.length * 4);
    vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
    return { object: 'embedding', index, embedding: bytes.toString('base64') };
  });
  const tokens = inputs.reduce((sum, input) => sum + input.split(/\s+/).filter(Boolean).length, 0);
  sendJson(response, 200, { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

function moderations(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body ?? {};
  const model = String(body.model ?? '');
  if (failed(model, response)) return;
  if (model !== 'moderate') return unknownModel(model, response);
  const results = inputsOf(body.input).map((input) => {
    const flagged = input.includes(FAKE_FLAG_WORD);
    const categories = Object.fromEntries(OPENAI_CATEGORIES.map((category) => [category, flagged && category === 'harassment']));
    const scores = Object.fromEntries(OPENAI_CATEGORIES.map((category) => [category, flagged && category === 'harassment' ? 0.93 : 0.01]));
    return { flagged, categories, category_scores: scores, category_applied_input_types: {} };
  });
  sendJson(response, 200, { id: `modr-fake${request.seq}`, model: 'omni-moderation-fake', results });
}

function blackPng(size: string): Buffer {
  const [width, height] = size.split('x').map(Number);
  return PNG.sync.write({ width, height, data: Buffer.alloc(width * height * 3) } as PNG, { colorType: 2, inputColorType: 2, inputHasAlpha: false });
}

function images(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body ?? {};
  const model = String(body.model ?? '');
  if (failed(model, response)) return;
  if (model !== 'painter' && model !== 'painter-url' && model !== 'painter-tokens') return unknownModel(model, response);
  const asUrl = model === 'painter-url' || body.response_format !== 'b64_json';
  const host = request.headers.host;
  const data = Array.from({ length: Number(body.n ?? 1) }, (_, index) => {
    const png = blackPng(String(body.size ?? '1024x1024'));
    const revised_prompt = `${FAKE_REVISED_PREFIX}${body.prompt}`;
    if (!asUrl) return { b64_json: png.toString('base64'), revised_prompt };
    const id = `img${request.seq}-${index}`;
    files.set(id, png);
    return { url: `http://${host}/files/${id}.png`, revised_prompt };
  });
  sendJson(response, 200, { created: Math.floor(Date.now() / 1000), data, ...(model === 'painter-tokens' ? { usage: FAKE_IMAGE_USAGE } : {}) });
}

/** `POST /v1/images/edits` (multipart, summarized by the recorder): `n` black PNGs of `size`, as b64_json. */
function imageEdits(request: RecordedRequest, response: ServerResponse): void {
  const fields = (request.body as { fields?: Record<string, string | string[]> } | undefined)?.fields ?? {};
  const model = String(fields.model ?? '');
  if (failed(model, response)) return;
  if (model !== 'painter' && model !== 'painter-tokens') return unknownModel(model, response);
  const data = Array.from({ length: Number(fields.n ?? 1) }, () => ({ b64_json: blackPng(String(fields.size ?? '1024x1024')).toString('base64') }));
  sendJson(response, 200, { created: Math.floor(Date.now() / 1000), data, ...(model === 'painter-tokens' ? { usage: FAKE_IMAGE_USAGE } : {}) });
}

function file(request: RecordedRequest, response: ServerResponse): void {
  const png = files.get(request.path.slice('/files/'.length).replace(/\.png$/, ''));
  if (!png) return sendJson(response, 404, { error: { message: 'no such file' } });
  response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
  response.end(png);
}

export const OPENAI_MEDIA_HANDLERS: Record<string, (request: RecordedRequest, response: ServerResponse) => void> = {
  'POST /v1/embeddings': embeddings,
  'POST /v1/moderations': moderations,
  'POST /v1/images/generations': images,
  'POST /v1/images/edits': imageEdits,
  'GET /files/': file,
  'POST /v1/audio/speech': speech,
};
