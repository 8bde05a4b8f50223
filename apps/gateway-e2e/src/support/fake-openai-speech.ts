/**
 * The fake OpenAI upstream's `POST /v1/audio/speech`, keyed by upstream model:
 * - `speaker`: the "audio" is FAKE_AUDIO_PREFIX + the input, sent in two chunks
 *   FAKE_SPEECH_GAP_MS apart, as `audio/mpeg` (or `speech.audio.delta` events with
 *   `stream_format: sse`, then `speech.audio.done` with usage: input tokens = words of the input,
 *   output tokens FAKE_SPEECH_OUTPUT_TOKENS).
 * - `always-500` / `reject-400`: as the other media endpoints (fake-openai-media.ts).
 */
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './fake-upstreams';

export const FAKE_AUDIO_PREFIX = 'FAKE-AUDIO:';
export const FAKE_SPEECH_OUTPUT_TOKENS = 120;
export const FAKE_SPEECH_GAP_MS = 150;
export const FAKE_SPEECH_REJECT_MESSAGE = 'fake-upstream rejected the speech: this voice is not allowed';

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function speech(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body ?? {};
  const model = String(body.model ?? '');
  if (model === 'always-500') return sendJson(response, 500, { error: { message: 'fake-upstream internal failure', type: 'server_error' } });
  if (model === 'reject-400') {
    return sendJson(response, 400, { error: { message: FAKE_SPEECH_REJECT_MESSAGE, type: 'invalid_request_error', param: 'voice', code: null } });
  }
  if (model !== 'speaker') return sendJson(response, 404, { error: { message: `The model '${model}' does not exist`, code: 'model_not_found' } });
  const audio = Buffer.from(`${FAKE_AUDIO_PREFIX}${String(body.input ?? '')}`);
  const halves = [audio.subarray(0, Math.ceil(audio.length / 2)), audio.subarray(Math.ceil(audio.length / 2))];
  const sse = body.stream_format === 'sse';
  response.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'audio/mpeg' });
  const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
  response.write(sse ? event({ type: 'speech.audio.delta', audio: halves[0].toString('base64') }) : halves[0]);
  setTimeout(() => {
    if (!sse) return void response.end(halves[1]);
    const input = words(String(body.input ?? ''));
    response.write(event({ type: 'speech.audio.delta', audio: halves[1].toString('base64') }));
    const usage = { input_tokens: input, output_tokens: FAKE_SPEECH_OUTPUT_TOKENS, total_tokens: input + FAKE_SPEECH_OUTPUT_TOKENS };
    response.end(event({ type: 'speech.audio.done', usage }));
  }, FAKE_SPEECH_GAP_MS);
}
