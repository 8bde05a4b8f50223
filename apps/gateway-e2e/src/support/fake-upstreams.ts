/**
 * Fake upstream providers for the end-to-end suite: two small HTTP servers on 127.0.0.1 that speak
 * the OpenAI Chat Completions and the Anthropic Messages wire formats, so the router's `openai` and
 * `anthropic` adapters can be exercised without leaving the machine.
 *
 * Behaviour is keyed by the upstream model name the router sends:
 * - `echo`: a deterministic reply quoting the last user message; a `get_weather`-style tool call
 *   when tools are offered and the prompt mentions "weather"; a reply quoting the tool result when
 *   the conversation ends with one; on Anthropic, a final assistant message is continued.
 * - `thinker`: reasoning (`reasoning_content` / a signed `thinking` block), then the echo reply. On
 *   Anthropic with `thinking.display: 'updates'` (which needs the `anthropic-beta` flag
 *   UPDATES_BETA, else a 400 as Anthropic answers), the reasoning block comes back empty with only
 *   its signature, followed by a signed block holding the progress note PROGRESS_UPDATE.
 * - `slow`: the echo reply streamed one word every SLOW_DELAY_MS, padded to 60 words.
 * - `cut-off`: a stream that sends CUT_OFF_CHUNKS text pieces, then drops the connection (a
 *   non-streamed call is dropped at once).
 * - `cached`: the echo reply, with usage that reports prompt-cache hits: CACHE_READ_TOKENS read
 *   (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`) and, on
 *   Anthropic, CACHE_WRITE_TOKENS written (`cache_creation_input_tokens`).
 * - `big-input`: as `slow`, reporting REPORTED_INPUT_TOKENS input tokens (Anthropic: in `message_start`).
 * - `always-500`: HTTP 500. `reject-400`: HTTP 400 with REJECT_400_MESSAGE.
 * - Token counting: Anthropic `POST /v1/messages/count_tokens` and OpenAI `POST /v1/responses/input_tokens`
 *   answer COUNT_BASE plus the words of the messages / input (so a count from here is told apart).
 * - `max_tokens` is honoured by keeping that many words of the text (finish `length` / `max_tokens`).
 * - structured output: OpenAI `response_format` and Anthropic `output_config.format` make the
 *   reply's text a JSON sample of the schema (`{"echo": <last user text>}` for `json_object`); an
 *   Anthropic `tool_choice: {type: 'tool'}` makes it a call of that tool with a sample of its schema.
 * - a forced tool call (OpenAI `tool_choice: 'required'` or a named function, Anthropic `{type: 'any'}`)
 *   is always a call: of a weather tool with the prompt's arguments, of any other with a schema sample.
 * - anything else: 404 in the provider's error shape.
 * OpenAI's embeddings, moderations and images endpoints: see fake-openai-media.ts.
 *
 * OpenAI's video API (`POST /v1/videos` multipart, `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`):
 * `sora-fake` is `queued`, then 25 % further `in_progress` per poll, then `completed` with
 * FAKE_VIDEO_BYTES as its content; `sora-fail` turns `failed` (FAKE_VIDEO_FAILURE) on its second poll;
 * `sora-flaky` behaves as `sora-fake` but answers its first poll with a 503.
 *
 * Every request is recorded (method, path, headers, parsed body, whether the client went away
 * before the response ended) and served back by `GET /__requests`; `DELETE /__requests` clears it.
 *
 * Pools (routing tests, see routing/*.spec.ts and video/routing.spec.ts): OpenAI chat and video models named `pool-<anything>` are
 * separate upstreams that answer as `echo` and count their calls. `GET /__pools` returns
 * `{<name>: calls}`; `PUT /__pools/<name>` with `{"mode": "ok" | "fail" | "limit" | "limit_once", "retry_after"?: s}`
 * makes it answer normally, HTTP 503, or HTTP 429 with `Retry-After` (when given): every time, or once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPENAI_MEDIA_HANDLERS } from './fake-openai-media';
import { OPENAI_AUDIO_HANDLERS, summarizeMultipart } from './fake-openai-audio';

/** Provider keys the router calls the fakes with (FAKE_OPENAI_KEY / FAKE_ANTHROPIC_KEY in the suite env). */
export const FAKE_OPENAI_KEY = 'sk-fake-openai-e2e-0123456789';
export const FAKE_ANTHROPIC_KEY = 'sk-ant-fake-e2e-0123456789';
export const FAKE_SIGNATURE = 'fake-signature-c2lnbmVk';
export const UPDATES_BETA = 'thinking-display-updates-2026-08-18';
export const PROGRESS_UPDATE = 'Reading the request, then answering.';
export const PROGRESS_SIGNATURE = 'fake-signature-dXBkYXRl';
export const REJECT_400_MESSAGE = 'fake-upstream rejected the request: max_tokens is too large for this model';
export const ALWAYS_500_MESSAGE = 'fake-upstream internal failure';
/** What OpenAI says about a key it refuses: it names part of the key, which must not reach clients. */
export const BAD_KEY_MESSAGE = 'Incorrect API key provided: sk-fake-***-0123. You can find your API key at https://platform.openai.com/account/api-keys.';
export const SLOW_DELAY_MS = 40;
export const CUT_OFF_CHUNKS = 3;
export const SLOW_WORDS = 60;
export const CACHE_READ_TOKENS = 3000;
export const CACHE_WRITE_TOKENS = 500;
export const REPORTED_INPUT_TOKENS = 2345;
export const COUNT_BASE = 100_000;
/** What the anthropic `echo` model appends when asked to continue a partial assistant turn. */
export const CONTINUATION = ' and that is how the sentence ends.';
/** The fake video API's file: the start of an MP4 (an `ftyp` box). */
export const FAKE_VIDEO_BYTES = Buffer.from('000000186674797069736f6d0000020069736f6d6d703431', 'hex');
export const FAKE_VIDEO_FAILURE = 'fake-upstream: this prompt violates the content policy';

export interface RecordedRequest {
  seq: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** Unix milliseconds. */
  receivedAt: number;
  /** The client closed the connection before the response was complete. */
  clientAborted: boolean;
  /** The response was written to its end. */
  completed: boolean;
}

/** The upload routes whose multipart bodies are recorded summarized. */
const SUMMARIZED_UPLOADS = /^\/v1\/(audio\/|images\/edits$)/;

export interface FakeUpstream {
  kind: 'openai' | 'anthropic';
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeUpstreams {
  openai: FakeUpstream;
  anthropic: FakeUpstream;
  close(): Promise<void>;
}

/** Pool upstreams (see the header): calls per name, and how each answers. */
const poolCalls = new Map<string, number>();
type PoolMode = 'ok' | 'fail' | 'limit' | 'limit_once';
const poolModes = new Map<string, { mode: PoolMode; retryAfter?: number }>();

function handlePoolControl(method: string, path: string, text: string, response: ServerResponse): void {
  if (method === 'GET') return sendJson(response, 200, Object.fromEntries(poolCalls));
  const name = decodeURIComponent(path.slice('/__pools/'.length));
  const body = JSON.parse(text || '{}') as { mode?: PoolMode; retry_after?: number };
  poolModes.set(name, { mode: body.mode ?? 'ok', retryAfter: body.retry_after });
  sendJson(response, 200, { name, ...poolModes.get(name) });
}

/** Counts a pool call; true when it answered with its failure mode. */
function poolFailed(model: string, response: ServerResponse): boolean {
  poolCalls.set(model, (poolCalls.get(model) ?? 0) + 1);
  const { mode, retryAfter } = poolModes.get(model) ?? { mode: 'ok' };
  if (mode === 'fail') sendJson(response, 503, { error: { message: `fake pool ${model} is down`, type: 'server_error' } });
  else if (mode === 'limit' || mode === 'limit_once') {
    // limit_once: this one 429, then the pool answers again.
    if (mode === 'limit_once') poolModes.set(model, { mode: 'ok' });
    const text = JSON.stringify({ error: { message: `fake pool ${model} is rate limited`, type: 'rate_limit_error' } });
    response.writeHead(429, { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}) });
    response.end(text);
  } else return false;
  return true;
}

export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const openai = await startServer('openai', handleOpenAI);
  const anthropic = await startServer('anthropic', handleAnthropic);
  return { openai, anthropic, close: async () => void (await Promise.all([openai.close(), anthropic.close()])) };
}

type Handler = (request: RecordedRequest, response: ServerResponse) => Promise<void>;

async function startServer(kind: FakeUpstream['kind'], handler: Handler): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  let seq = 0;
  const server: Server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const path = (incoming.url ?? '/').split('?', 1)[0];
      if (path === '/__requests') {
        if (incoming.method === 'DELETE') requests.length = 0;
        return sendJson(response, 200, requests);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      if (path === '/__pools' || path.startsWith('/__pools/')) return handlePoolControl(incoming.method ?? 'GET', path, text, response);
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // recorded as text
      }
      const contentType = String(incoming.headers['content-type'] ?? '');
      // File uploads (audio, image edits) are recorded as their fields and files' sizes and hashes;
      // other multipart bodies (video jobs, whose tests and handler parse them) as their text.
      if (/^multipart\/form-data/i.test(contentType) && SUMMARIZED_UPLOADS.test(path)) body = summarizeMultipart(Buffer.concat(chunks), contentType) ?? text;
      const recorded: RecordedRequest = {
        seq: ++seq,
        method: incoming.method ?? '',
        path,
        headers: { ...incoming.headers },
        body,
        receivedAt: Date.now(),
        clientAborted: false,
        completed: false,
      };
      requests.push(recorded);
      response.on('close', () => {
        recorded.completed = response.writableFinished;
        if (!response.writableFinished) recorded.clientAborted = true;
      });
      handler(recorded, response).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: `fake upstream bug: ${String(error)}` } });
        else response.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    kind,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- shared ---------------------------------------------------------------------------------

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes SSE frames one by one (optionally paced) and ends the response; stops if the client left. */
async function sendSse(response: ServerResponse, frames: string[], delayMs = 0, cutAfter?: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const [index, frame] of frames.entries()) {
    if (response.destroyed || response.writableEnded) return;
    if (cutAfter !== undefined && index >= cutAfter) {
      // Let what was written reach the client, then drop the connection mid-stream.
      await sleep(50);
      response.socket?.destroy();
      return;
    }
    response.write(frame);
    if (delayMs > 0) await sleep(delayMs);
  }
  if (!response.destroyed) response.end();
}

/** Whitespace-separated words (each keeping its leading space) so deltas join back to the text. */
function pieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [text];
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** A tool name that looks like a weather tool, else the first tool. */
function weatherTool(names: string[]): string | undefined {
  return names.find((name) => /weather/i.test(name)) ?? names[0];
}

function weatherArguments(prompt: string): Record<string, unknown> {
  const city = /\bin ([A-Z][a-zA-Z]+)/.exec(prompt)?.[1] ?? 'Paris';
  return { city, unit: 'celsius' };
}

function echoText(lastUser: string): string {
  return `Echo from the fake upstream: "${lastUser}". That is all I have to say.`;
}

function toolResultText(toolName: string, result: string): string {
  return `The ${toolName} tool reported: ${result}. Anything else?`;
}

function reasoningText(lastUser: string): string {
  return `The user asked "${lastUser}". I will think step by step and then answer briefly.`;
}

function slowText(lastUser: string): string {
  const base = echoText(lastUser).split(/\s+/);
  const filler = Array.from({ length: Math.max(0, SLOW_WORDS - base.length) }, (_, i) => `word${i + 1}`);
  return [...base, ...filler].join(' ');
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: any) => (typeof part?.text === 'string' ? part.text : typeof part?.content === 'string' ? part.content : '')).join('');
}

/** What the last turn asks of the model, in provider-neutral terms. */
interface Turn {
  lastUser: string;
  toolResult?: { name: string; content: string };
  /** Anthropic: the conversation ends with a partial assistant turn to continue. */
  prefill?: string;
  toolNames: string[];
}

interface Reply {
  reasoning?: string;
  text: string;
  toolCall?: { id: string; name: string; arguments: string };
  inputTokens: number;
  /** The text was cut at `max_tokens` (one word counts as one token here). */
  truncated?: boolean;
}

/** Honours `max_tokens` the simple way: the text keeps its first `max_tokens` words. */
function limitReply(reply: Reply, maxTokens: unknown): Reply {
  if (typeof maxTokens !== 'number' || reply.toolCall || words(reply.text) <= maxTokens) return reply;
  return { ...reply, text: pieces(reply.text).slice(0, maxTokens).join(''), truncated: true };
}

function replyFor(model: string, turn: Turn, inputTokens: number): Reply {
  const reasoning = model === 'thinker' ? reasoningText(turn.lastUser) : undefined;
  if (turn.toolResult) return { reasoning, text: toolResultText(turn.toolResult.name, turn.toolResult.content), inputTokens };
  if (turn.prefill !== undefined) return { reasoning, text: CONTINUATION, inputTokens };
  const tool = turn.toolNames.length > 0 && /weather/i.test(turn.lastUser) ? weatherTool(turn.toolNames) : undefined;
  if (tool) {
    return {
      reasoning,
      text: '',
      toolCall: { id: `call_fake_${Date.now().toString(36)}`, name: tool, arguments: JSON.stringify(weatherArguments(turn.lastUser)) },
      inputTokens,
    };
  }
  return { reasoning, text: model === 'slow' || model === 'big-input' ? slowText(turn.lastUser) : echoText(turn.lastUser), inputTokens };
}

function outputTokens(reply: Reply): number {
  return words(reply.text) + words(reply.reasoning ?? '') + (reply.toolCall ? 5 : 0);
}

const KNOWN_MODELS = new Set(['echo', 'thinker', 'slow', 'cut-off', 'cached', 'big-input']);

/** A simple value matching a JSON schema: what a model constrained to it would produce. */
function sampleOf(schema: any, name = 'value'): unknown {
  if (schema?.enum) return schema.enum[0];
  const type = Array.isArray(schema?.type) ? schema.type[0] : (schema?.type ?? (schema?.properties ? 'object' : 'string'));
  if (type === 'object') return Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([key, value]) => [key, sampleOf(value, key)]));
  if (type === 'array') return [sampleOf(schema?.items ?? {}, name)];
  if (type === 'integer') return 7;
  if (type === 'number') return 1.5;
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  return `fake ${name}`;
}

/** The answer as JSON text when the request asks for structured output (nothing to do for a tool call). */
function asJson(reply: Reply, format: any, turn: Turn): Reply {
  if (reply.toolCall || !format || reply.text === '') return reply;
  const value = format.type === 'json_object' ? { echo: turn.lastUser } : sampleOf(format.schema ?? format.json_schema?.schema);
  return { ...reply, text: JSON.stringify(value), truncated: false };
}

/**
 * A tool call the request forces (a named tool, or any tool): the named one, else a weather-like
 * one, else the first. A weather tool keeps the arguments read from the prompt; any other tool
 * (such as a client's JSON-answer tool) gets a sample of its schema, as a constrained model would.
 */
function forcedToolCall(reply: Reply, tools: { name: string; schema: unknown }[], named: string | undefined, idPrefix: string): Reply {
  const tool =
    named !== undefined ? tools.find((candidate) => candidate.name === named) : (tools.find((candidate) => /weather/i.test(candidate.name)) ?? tools[0]);
  if (!tool) return reply;
  const keep = reply.toolCall?.name === tool.name && /weather/i.test(tool.name);
  const args = keep ? (reply.toolCall as NonNullable<Reply['toolCall']>).arguments : JSON.stringify(sampleOf(tool.schema));
  return { ...reply, text: '', truncated: false, toolCall: { id: `${idPrefix}${Date.now().toString(36)}`, name: tool.name, arguments: args } };
}

function openaiStructured(body: any, reply: Reply, turn: Turn): Reply {
  const choice = body.tool_choice;
  if (choice === 'required' || choice?.type === 'function') {
    const tools = (Array.isArray(body.tools) ? body.tools : []).map((tool: any) => ({
      name: String(tool?.function?.name ?? ''),
      schema: tool?.function?.parameters,
    }));
    return forcedToolCall(reply, tools, choice === 'required' ? undefined : String(choice.function?.name ?? ''), 'call_fake_');
  }
  const format = body.response_format;
  return format?.type === 'json_schema' || format?.type === 'json_object' ? asJson(reply, format, turn) : reply;
}

function anthropicStructured(body: any, reply: Reply, turn: Turn): Reply {
  const forced = body.tool_choice?.type === 'tool' ? (body.tools ?? []).find((tool: any) => tool?.name === body.tool_choice.name) : undefined;
  if (forced) {
    const args = JSON.stringify(sampleOf(forced.input_schema));
    return { ...reply, text: '', truncated: false, toolCall: { id: `toolu_fake_${Date.now().toString(36)}`, name: forced.name, arguments: args } };
  }
  if (body.tool_choice?.type === 'any') {
    const tools = (Array.isArray(body.tools) ? body.tools : []).map((tool: any) => ({ name: String(tool?.name ?? ''), schema: tool?.input_schema }));
    return forcedToolCall(reply, tools, undefined, 'toolu_fake_');
  }
  return body.output_config?.format ? asJson(reply, body.output_config.format, turn) : reply;
}

// ---- OpenAI Chat Completions ------------------------------------------------------------------

function openaiTurn(body: any): Turn {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  const lastUser = textOf([...messages].reverse().find((message) => message?.role === 'user')?.content);
  const toolNames = (Array.isArray(body?.tools) ? body.tools : []).map((tool: any) => String(tool?.function?.name ?? ''));
  if (last?.role === 'tool') {
    const call = messages
      .flatMap((message) => (message?.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls : []))
      .find((c: any) => c?.id === last.tool_call_id);
    return { lastUser, toolNames, toolResult: { name: String(call?.function?.name ?? 'tool'), content: textOf(last.content) } };
  }
  return { lastUser, toolNames };
}

async function handleOpenAI(request: RecordedRequest, response: ServerResponse): Promise<void> {
  const audio = OPENAI_AUDIO_HANDLERS[`${request.method} ${request.path.startsWith('/__audio-release/') ? '/__audio-release/' : request.path}`];
  if (audio) return audio(request, response);
  const media = OPENAI_MEDIA_HANDLERS[`${request.method} ${request.path.startsWith('/files/') ? '/files/' : request.path}`];
  if (media) return media(request, response);
  if (request.path === '/v1/videos' || request.path.startsWith('/v1/videos/')) return handleOpenAIVideos(request, response);
  if (request.method === 'POST' && request.path === '/v1/responses/input_tokens') {
    return sendJson(response, 200, { object: 'response.input_tokens', input_tokens: COUNT_BASE + words(JSON.stringify(request.body?.input ?? '')) });
  }
  if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
    return sendJson(response, 404, { error: { message: `no route ${request.method} ${request.path}`, type: 'invalid_request_error' } });
  }
  const body = request.body ?? {};
  let model = String(body.model ?? '');
  if (model.startsWith('pool-')) {
    if (poolFailed(model, response)) return;
    model = 'echo';
  }
  if (model === 'always-500') return sendJson(response, 500, { error: { message: ALWAYS_500_MESSAGE, type: 'server_error' } });
  if (model === 'bad-key') return sendJson(response, 401, { error: { message: BAD_KEY_MESSAGE, type: 'invalid_request_error', code: 'invalid_api_key' } });
  if (model === 'reject-400') {
    return sendJson(response, 400, { error: { message: REJECT_400_MESSAGE, type: 'invalid_request_error', param: 'max_tokens', code: null } });
  }
  if (!KNOWN_MODELS.has(model)) {
    return sendJson(response, 404, { error: { message: `The model '${model}' does not exist`, type: 'invalid_request_error', code: 'model_not_found' } });
  }
  if (model === 'cut-off' && body.stream !== true) return void response.socket?.destroy();
  const turn = openaiTurn(body);
  const counted = Math.max(1, words(JSON.stringify(body.messages ?? '')));
  // prompt_tokens includes the cached ones (OpenAI's definition).
  const inputTokens = model === 'big-input' ? REPORTED_INPUT_TOKENS : model === 'cached' ? counted + CACHE_READ_TOKENS : counted;
  const reply = openaiStructured(body, limitReply(replyFor(model, turn, inputTokens), body.max_tokens), turn);
  const usage = {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens(reply),
    total_tokens: inputTokens + outputTokens(reply),
    ...(model === 'cached' ? { prompt_tokens_details: { cached_tokens: CACHE_READ_TOKENS } } : {}),
  };
  const id = `chatcmpl-fake${request.seq}`;
  const created = Math.floor(Date.now() / 1000);
  const finishReason = reply.toolCall ? 'tool_calls' : reply.truncated ? 'length' : 'stop';

  if (body.stream !== true) {
    const message: Record<string, unknown> = { role: 'assistant', content: reply.toolCall && reply.text === '' ? null : reply.text };
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    if (reply.toolCall) {
      message.tool_calls = [{ id: reply.toolCall.id, type: 'function', function: { name: reply.toolCall.name, arguments: reply.toolCall.arguments } }];
    }
    return sendJson(response, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
      usage,
    });
  }

  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const frames: string[] = [chunk({ role: 'assistant', content: '' })];
  if (reply.reasoning) for (const piece of pieces(reply.reasoning)) frames.push(chunk({ reasoning_content: piece }));
  if (reply.text) for (const piece of pieces(reply.text)) frames.push(chunk({ content: piece }));
  if (reply.toolCall) {
    frames.push(chunk({ tool_calls: [{ index: 0, id: reply.toolCall.id, type: 'function', function: { name: reply.toolCall.name, arguments: '' } }] }));
    // Split the JSON arguments into small pieces, as real providers stream them.
    for (const piece of reply.toolCall.arguments.match(/.{1,6}/gs) ?? []) {
      frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
  }
  frames.push(chunk({}, finishReason));
  if (body.stream_options?.include_usage === true) {
    frames.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  // Role chunk + CUT_OFF_CHUNKS content chunks, then the connection drops.
  await sendSse(response, frames, model === 'slow' || model === 'big-input' ? SLOW_DELAY_MS : 0, model === 'cut-off' ? 1 + CUT_OFF_CHUNKS : undefined);
}

// ---- Anthropic Messages -----------------------------------------------------------------------

function anthropicTurn(body: any): Turn {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  const toolNames = (Array.isArray(body?.tools) ? body.tools : []).map((tool: any) => String(tool?.name ?? ''));
  const userTexts = (message: any): string =>
    typeof message?.content === 'string'
      ? message.content
      : (Array.isArray(message?.content) ? message.content : [])
          .filter((block: any) => block?.type === 'text')
          .map((block: any) => block.text)
          .join(' ');
  const lastUser = userTexts([...messages].reverse().find((message) => message?.role === 'user' && userTexts(message) !== ''));
  if (last?.role === 'assistant') return { lastUser, toolNames, prefill: userTexts(last) };
  const results = Array.isArray(last?.content) ? last.content.filter((block: any) => block?.type === 'tool_result') : [];
  if (results.length > 0) {
    const result = results[results.length - 1];
    const use = messages
      .flatMap((message) => (message?.role === 'assistant' && Array.isArray(message.content) ? message.content : []))
      .find((block: any) => block?.type === 'tool_use' && block.id === result.tool_use_id);
    return { lastUser, toolNames, toolResult: { name: String(use?.name ?? 'tool'), content: textOf(result.content) } };
  }
  return { lastUser, toolNames };
}

function anthropicError(response: ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: 'error', error: { type, message } });
}

async function handleAnthropic(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.method === 'POST' && request.path === '/v1/messages/count_tokens') {
    const counted = request.body ?? {};
    if (counted.max_tokens !== undefined || counted.stream !== undefined)
      return anthropicError(response, 400, 'invalid_request_error', 'count_tokens: unexpected field');
    return sendJson(response, 200, { input_tokens: COUNT_BASE + words(JSON.stringify(counted.messages ?? '')) + words(String(counted.system ?? '')) });
  }
  if (request.method !== 'POST' || request.path !== '/v1/messages') {
    return anthropicError(response, 404, 'not_found_error', `no route ${request.method} ${request.path}`);
  }
  const body = request.body ?? {};
  let model = String(body.model ?? '');
  if (model.startsWith('pool-')) {
    if (poolFailed(model, response)) return;
    model = 'echo';
  }
  if (model === 'always-500') return anthropicError(response, 500, 'api_error', ALWAYS_500_MESSAGE);
  if (model === 'reject-400') return anthropicError(response, 400, 'invalid_request_error', REJECT_400_MESSAGE);
  if (!KNOWN_MODELS.has(model)) return anthropicError(response, 404, 'not_found_error', `model: ${model}`);
  if (typeof body.max_tokens !== 'number') return anthropicError(response, 400, 'invalid_request_error', 'max_tokens: Field required');

  if (model === 'cut-off' && body.stream !== true) return void response.socket?.destroy();
  const updates = body.thinking?.display === 'updates';
  const betas = String(request.headers['anthropic-beta'] ?? '').split(',');
  if (updates && !betas.includes(UPDATES_BETA)) {
    return anthropicError(response, 400, 'invalid_request_error', `thinking.display: 'updates' requires the anthropic-beta ${UPDATES_BETA}`);
  }
  const turn = anthropicTurn(body);
  const inputTokens =
    model === 'big-input' ? REPORTED_INPUT_TOKENS : Math.max(1, words(JSON.stringify(body.messages ?? '')) + words(String(body.system ?? '')));
  // Anthropic's input_tokens excludes the cache reads and writes, which have counters of their own.
  const inputUsage = {
    input_tokens: inputTokens,
    ...(model === 'cached' ? { cache_read_input_tokens: CACHE_READ_TOKENS, cache_creation_input_tokens: CACHE_WRITE_TOKENS } : {}),
  };
  const reply = anthropicStructured(body, limitReply(replyFor(model, turn, inputTokens), body.max_tokens), turn);
  const id = `msg_fake${request.seq}`;
  const stopReason = reply.toolCall ? 'tool_use' : reply.truncated ? 'max_tokens' : 'end_turn';
  const output = outputTokens(reply);

  // With display 'updates' the reasoning is not shown, only a progress note in a block of its own.
  const thinking = !reply.reasoning
    ? []
    : updates
      ? [
          { thinking: '', signature: FAKE_SIGNATURE },
          { thinking: PROGRESS_UPDATE, signature: PROGRESS_SIGNATURE },
        ]
      : [{ thinking: reply.reasoning, signature: FAKE_SIGNATURE }];
  const content: object[] = thinking.map((block) => ({ type: 'thinking', ...block }));
  if (reply.text) content.push({ type: 'text', text: reply.text });
  if (reply.toolCall) content.push({ type: 'tool_use', id: reply.toolCall.id, name: reply.toolCall.name, input: JSON.parse(reply.toolCall.arguments) });

  if (body.stream !== true) {
    return sendJson(response, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { ...inputUsage, output_tokens: output },
    });
  }

  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const frames: string[] = [
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputUsage, output_tokens: 1 },
      },
    }),
    event('ping', {}),
  ];
  let index = 0;
  for (const block of thinking) {
    frames.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    for (const piece of block.thinking ? pieces(block.thinking) : [])
      frames.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }));
    frames.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.text) {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const piece of pieces(reply.text)) frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.toolCall) {
    frames.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: reply.toolCall.id, name: reply.toolCall.name, input: {} } }));
    for (const piece of reply.toolCall.arguments.match(/.{1,6}/gs) ?? []) {
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
    }
    frames.push(event('content_block_stop', { index }));
  }
  frames.push(event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: output } }));
  frames.push(event('message_stop', {}));
  // message_start, ping, content_block_start + CUT_OFF_CHUNKS text deltas, then the connection drops.
  await sendSse(response, frames, model === 'slow' || model === 'big-input' ? SLOW_DELAY_MS : 0, model === 'cut-off' ? 3 + CUT_OFF_CHUNKS : undefined);
}

// ---- OpenAI videos ------------------------------------------------------------------------------

interface FakeVideo {
  id: string;
  model: string;
  prompt: string;
  size: string;
  seconds: string;
  createdAt: number;
  polls: number;
  /** `sora-flaky` has answered its one 503. */
  hiccuped?: boolean;
}

const fakeVideos = new Map<string, FakeVideo>();
let fakeVideoSeq = 0;

function videoObject(video: FakeVideo): Record<string, unknown> {
  const failed = video.model === 'sora-fail' && video.polls >= 2;
  const progress = Math.min(100, video.polls * 25);
  const status = failed ? 'failed' : video.polls === 0 ? 'queued' : progress >= 100 ? 'completed' : 'in_progress';
  return {
    id: video.id,
    object: 'video',
    model: video.model,
    status,
    progress: failed ? 50 : progress,
    created_at: video.createdAt,
    completed_at: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    expires_at: null,
    error: failed ? { code: 'moderation_blocked', message: FAKE_VIDEO_FAILURE } : null,
    prompt: video.prompt,
    remixed_from_video_id: null,
    seconds: video.seconds,
    size: video.size,
  };
}

async function handleOpenAIVideos(request: RecordedRequest, response: ServerResponse): Promise<void> {
  const notFound = () => sendJson(response, 404, { error: { message: `no video ${request.path}`, type: 'invalid_request_error' } });
  if (request.method === 'POST' && request.path === '/v1/videos') {
    const contentType = String(request.headers['content-type'] ?? '');
    if (!contentType.startsWith('multipart/form-data')) {
      return sendJson(response, 400, { error: { message: 'expected multipart/form-data', type: 'invalid_request_error' } });
    }
    // The official SDK sends multipart; undici parses it back the same way a server would.
    const form = await new Response(String(request.body ?? ''), { headers: { 'content-type': contentType } }).formData();
    const model = String(form.get('model') ?? '');
    // A pool counts its submissions and may fail them; its videos then complete like sora-fake's.
    if (model.startsWith('pool-')) {
      if (poolFailed(model, response)) return;
    } else if (!['sora-fake', 'sora-fail', 'sora-flaky'].includes(model)) {
      return sendJson(response, 404, { error: { message: `The model '${model}' does not exist`, type: 'invalid_request_error' } });
    }
    const video: FakeVideo = {
      id: `video_fake${++fakeVideoSeq}`,
      model,
      prompt: String(form.get('prompt') ?? ''),
      size: String(form.get('size') ?? '720x1280'),
      seconds: String(form.get('seconds') ?? '4'),
      createdAt: Math.floor(Date.now() / 1000),
      polls: 0,
    };
    fakeVideos.set(video.id, video);
    return sendJson(response, 200, videoObject(video));
  }
  const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(request.path);
  const video = match && request.method === 'GET' ? fakeVideos.get(match[1]) : undefined;
  if (!video) return notFound();
  if (match?.[2]) {
    if (videoObject(video).status !== 'completed') return sendJson(response, 409, { error: { message: 'video is not ready', type: 'invalid_request_error' } });
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': FAKE_VIDEO_BYTES.length });
    return void response.end(FAKE_VIDEO_BYTES);
  }
  if (video.model === 'sora-flaky' && !video.hiccuped) {
    video.hiccuped = true;
    return sendJson(response, 503, { error: { message: 'fake-upstream: temporarily overloaded', type: 'server_error' } });
  }
  video.polls++;
  sendJson(response, 200, videoObject(video));
}
