/**
 * The fake OpenAI upstream's audio endpoints, `POST /v1/audio/transcriptions` and
 * `/v1/audio/translations`, keyed by upstream model. The multipart body is parsed here, on its own
 * (not with the gateway's parser), and recorded as `{fields, files}`: each file by name, size and
 * SHA-256, so a test compares them with what its client sent.
 * - `whisper-echo`: text naming the file; `json` / `verbose_json` report `usage: {type: "duration",
 *   seconds: FAKE_AUDIO_SECONDS}` (not the file's duration: upstream usage must win).
 * - `whisper-tokens`: as `whisper-echo`, reporting FAKE_AUDIO_TOKENS (`type: "tokens"`).
 * - `whisper-silent`: no usage in any format.
 * - `stream=true` (any model): `transcript.text.delta` events, then `transcript.text.done` with FAKE_AUDIO_TOKENS;
 *   `whisper-held-stream` sends the first event and holds the rest until the test posts
 *   `/__audio-release/<filename>`, so a test tells a relayed stream from one delivered whole.
 * - `always-500`: HTTP 500; `reject-400`: HTTP 400 with FAKE_AUDIO_REJECTION.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './fake-upstreams';

export const FAKE_AUDIO_SECONDS = 7;
export const FAKE_AUDIO_TOKENS = { input_tokens: 1000, output_tokens: 200 };
export const FAKE_AUDIO_REJECTION = 'fake-upstream rejected the audio: the file is not supported';

export interface FileSummary {
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

export interface MultipartSummary {
  fields: Record<string, string | string[]>;
  /** The first file of each field name. */
  files: Record<string, FileSummary>;
  /** Every file part in order, with its field name (`image[]` repeated, say). */
  fileList: (FileSummary & { field: string })[];
}

/** A `multipart/form-data` body as the fields and files it carries (a plain parser: CRLF framing, quoted names). */
export function summarizeMultipart(raw: Buffer, contentType: string): MultipartSummary | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const summary: MultipartSummary = { fields: {}, files: {}, fileList: [] };
  let start = raw.indexOf(delimiter);
  while (start !== -1) {
    const headerStart = start + delimiter.length;
    if (raw.subarray(headerStart, headerStart + 2).toString() === '--') break;
    const next = raw.indexOf(delimiter, headerStart);
    if (next === -1) return undefined;
    const part = raw.subarray(headerStart + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    if (filename !== undefined) {
      const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? '';
      const file = { filename, contentType: type, size: content.length, sha256: createHash('sha256').update(content).digest('hex') };
      summary.files[name] ??= file;
      summary.fileList.push({ field: name, ...file });
    } else {
      const value = content.toString('utf8');
      const existing = summary.fields[name];
      summary.fields[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
    }
    start = next;
  }
  return summary;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function audio(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body as MultipartSummary | undefined;
  const model = String(body?.fields?.model ?? '');
  const file = body?.files?.file;
  if (model === 'always-500') return sendJson(response, 500, { error: { message: 'fake-upstream internal failure', type: 'server_error' } });
  if (model === 'reject-400')
    return sendJson(response, 400, { error: { message: FAKE_AUDIO_REJECTION, type: 'invalid_request_error', param: 'file', code: null } });
  if (!file) return sendJson(response, 400, { error: { message: 'fake-upstream: no file part', type: 'invalid_request_error', param: 'file' } });
  const translating = request.path.endsWith('/translations');
  const text = `${translating ? 'Fake translation' : 'Fake transcript'} of ${file.filename} (${file.size} bytes)`;
  const format = String(body?.fields?.response_format ?? 'json');
  if (body?.fields?.stream === 'true') {
    const done = {
      type: 'transcript.text.done',
      text,
      usage: { type: 'tokens', ...FAKE_AUDIO_TOKENS, total_tokens: FAKE_AUDIO_TOKENS.input_tokens + FAKE_AUDIO_TOKENS.output_tokens },
    };
    const events = [...text.split(/(?<= )/).map((delta) => ({ type: 'transcript.text.delta', delta })), done];
    const sse = (list: object[]) => list.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (model !== 'whisper-held-stream') return void response.end(sse(events));
    // The first event now, the rest once the test releases the file's name (POST /__audio-release/<filename>).
    response.write(sse(events.slice(0, 1)));
    return void released(file.filename).then(() => response.end(sse(events.slice(1))));
  }
  if (format === 'text' || format === 'srt' || format === 'vtt') {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    return void response.end(format === 'vtt' ? `WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n${text}\n\n` : `${text}\n`);
  }
  const usage =
    model === 'whisper-tokens'
      ? { type: 'tokens', ...FAKE_AUDIO_TOKENS, total_tokens: FAKE_AUDIO_TOKENS.input_tokens + FAKE_AUDIO_TOKENS.output_tokens }
      : model === 'whisper-echo'
        ? { type: 'duration', seconds: FAKE_AUDIO_SECONDS }
        : undefined;
  const answer: Record<string, unknown> =
    format === 'verbose_json'
      ? { task: translating ? 'translate' : 'transcribe', language: 'english', duration: FAKE_AUDIO_SECONDS, text, segments: [] }
      : { text };
  if (usage) answer.usage = usage;
  sendJson(response, 200, answer);
}

/** Held streams (`whisper-held-stream`) by file name, released by `POST /__audio-release/<filename>`. */
const releases = new Map<string, { promise: Promise<void>; release: () => void }>();
function releaseOf(filename: string): { promise: Promise<void>; release: () => void } {
  let entry = releases.get(filename);
  if (!entry) {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    entry = { promise, release };
    releases.set(filename, entry);
  }
  return entry;
}
const released = (filename: string): Promise<void> => releaseOf(filename).promise;

function releaseAudio(request: RecordedRequest, response: ServerResponse): void {
  releaseOf(decodeURIComponent(request.path.slice('/__audio-release/'.length))).release();
  sendJson(response, 200, { released: true });
}

export const OPENAI_AUDIO_HANDLERS: Record<string, (request: RecordedRequest, response: ServerResponse) => void> = {
  'POST /v1/audio/transcriptions': audio,
  'POST /v1/audio/translations': audio,
  'POST /__audio-release/': releaseAudio,
};
