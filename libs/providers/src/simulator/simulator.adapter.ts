import { randomUUID } from 'node:crypto';
import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { EmbeddingRequest, EmbeddingResult, ImageEditRequest, ImageRequest, ImageResult, ModerationRequest, ModerationResult } from '@gateway/canonical';
import type { TranscriptionRequest, TranscriptionResult } from '@gateway/canonical';
import type { SpeechCall, SpeechStream } from '@gateway/canonical';
import { abortedError, UpstreamError, type ProviderAdapter, type UpstreamRoute } from '../provider-adapter';
import { countExactTokens, splitTokenPieces } from '../token-count';
import { SIMULATOR_DEFAULT_DIMENSIONS, simulatedEmbedding } from './simulator-embeddings';
import { simulatedPng } from './simulator-image';
import { simulatedImageEdit } from './simulator-image-edit';
import { simulatedModeration } from './simulator-moderation';
import { simulatedTranscription } from './simulator-transcription';
import { simulatorVideos } from './simulator-video';
import { simulatedSpeech } from './simulator-speech';
import { joinPieces, simulateTurn, type SimulatedTurn } from './simulator-turn';

export { simulatorTokenLogprobs } from './simulator-logprobs';

/**
 * Simulator settings: adapter-wide defaults from the constructor, overridden per route by the
 * catalog's `options` (camelCase or snake_case keys, e.g. `tokenDelayMs` or `token_delay_ms`).
 */
export interface SimulatorOptions {
  /** Delay per output token: between streamed pieces, and in total before `complete()` returns. Default 0. */
  tokenDelayMs: number;
  /** Reason on every request, not only when the request enables reasoning (`always_reason`). */
  alwaysReason: boolean;
  /** Words in the reply body (default: 16–31, chosen deterministically). */
  replyWords?: number;
  /** Fail every call with this upstream status (0 = connect error), to exercise retries and fallbacks. */
  failStatus?: number;
}

/**
 * The built-in model: no network, deterministic replies derived from the input (with a quote of
 * the last message), real gpt-tokenizer token counts, `maxTokens` and `stop` honoured, tool calls
 * when asked for, reasoning with a signature when enabled, logprobs, and token-by-token streaming
 * that stops promptly when the signal aborts (rejecting like the HTTP adapters: see `abortedError`).
 */
export class SimulatorAdapter implements ProviderAdapter {
  readonly needsBaseUrl = false;

  constructor(private readonly defaults: Partial<SimulatorOptions> = {}) {}

  async complete(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<CanonicalResponse> {
    throwIfAborted(signal);
    const options = this.optionsFor(route);
    failIfConfigured(options);
    const turn = simulateTurn(route.upstreamModel, request, options);
    // Generation time: as long as streaming the same output would take.
    await abortableDelay(options.tokenDelayMs * turn.usage.outputTokens, signal);
    return toResponse(turn, request);
  }

  async *stream(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): AsyncIterable<CanonicalStreamEvent> {
    throwIfAborted(signal);
    const options = this.optionsFor(route);
    failIfConfigured(options);
    const turn = simulateTurn(route.upstreamModel, request, options);
    for (const { event, delayed } of streamEvents(turn, request)) {
      if (delayed) await abortableDelay(options.tokenDelayMs, signal);
      // Checked before every event: once the caller aborts, nothing more is emitted.
      throwIfAborted(signal);
      yield event;
    }
  }

  /**
   * Unit-length vectors of the requested size (see `simulatedEmbedding`); tokens counted exactly
   * with gpt-tokenizer, as a real upstream reports them (the router has already held the inputs
   * to the request's token limit, which bounds the work).
   */
  async embed(route: UpstreamRoute, request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult> {
    this.beforeMediaCall(route, signal);
    const dimensions = request.dimensions ?? SIMULATOR_DEFAULT_DIMENSIONS;
    return {
      vectors: request.inputs.map((input) => simulatedEmbedding(route.upstreamModel, input, dimensions)),
      inputTokens: request.inputs.reduce((sum, input) => sum + countExactTokens(input), 0),
    };
  }

  /** Keyword scoring (see `simulatedModeration`). */
  async moderate(route: UpstreamRoute, request: ModerationRequest, signal: AbortSignal): Promise<ModerationResult> {
    this.beforeMediaCall(route, signal);
    return { id: `modr-${randomUUID()}`, results: request.inputs.map(simulatedModeration) };
  }

  /** PNGs of the requested size, one pattern per prompt and image index (see `simulatedPng`). */
  async generateImages(route: UpstreamRoute, request: ImageRequest, signal: AbortSignal): Promise<ImageResult> {
    this.beforeMediaCall(route, signal);
    const [width, height] = request.size.split('x').map(Number);
    const images = [];
    for (let index = 0; index < request.n; index++) {
      throwIfAborted(signal);
      const seed = `${route.upstreamModel}\u0000${request.quality}\u0000${request.style}\u0000${index}\u0000${request.prompt}`;
      images.push({ bytes: simulatedPng(seed, width, height), contentType: 'image/png', revisedPrompt: request.prompt });
    }
    return { images };
  }

  /** Each of the `n` edits is of the first image (see `simulatedImageEdit`): its colours inverted, where the mask allows. */
  async editImages(route: UpstreamRoute, request: ImageEditRequest, signal: AbortSignal): Promise<ImageResult> {
    this.beforeMediaCall(route, signal);
    const [width, height] = request.size.split('x').map(Number);
    const input = await readAll(await request.images[0].open());
    const mask = request.mask ? await readAll(await request.mask.open()) : undefined;
    const images = [];
    for (let index = 0; index < request.n; index++) {
      throwIfAborted(signal);
      images.push({ bytes: simulatedImageEdit(input, mask, request.prompt, index, width, height), contentType: 'image/png', revisedPrompt: request.prompt });
    }
    return { images };
  }

  /**
   * Text naming the file and its true duration, read from its header (see `simulatedTranscription`);
   * a stream's events `tokenDelayMs` apart, as a chat stream's tokens are.
   */
  async transcribe(route: UpstreamRoute, request: TranscriptionRequest, signal: AbortSignal): Promise<TranscriptionResult> {
    this.beforeMediaCall(route, signal);
    const result = await simulatedTranscription(request);
    const { tokenDelayMs } = this.optionsFor(route);
    if (result.body.kind !== 'events' || tokenDelayMs === 0) return result;
    const events = result.body.events;
    async function* paced(): AsyncGenerator<Record<string, unknown>> {
      let first = true;
      for await (const event of events) {
        if (!first) await abortableDelay(tokenDelayMs, signal);
        first = false;
        yield event;
      }
    }
    return { ...result, body: { kind: 'events', events: paced() } };
  }

  /** A real test-pattern clip after a simulated wait (see `simulatorVideos`). */
  readonly createVideo = simulatorVideos.create;
  readonly pollVideo = simulatorVideos.poll;
  readonly downloadVideo = simulatorVideos.download;

  /** The settings for one route: route options over constructor defaults over built-in defaults. */
  optionsFor(route: UpstreamRoute): SimulatorOptions {
    const routeOptions = route.options ?? {};
    const pick = (camel: string, snake: string): unknown => routeOptions[camel] ?? routeOptions[snake];
    return {
      tokenDelayMs: nonNegativeNumber(pick('tokenDelayMs', 'token_delay_ms')) ?? this.defaults.tokenDelayMs ?? 0,
      alwaysReason: booleanOption(pick('alwaysReason', 'always_reason')) ?? this.defaults.alwaysReason ?? false,
      replyWords: nonNegativeNumber(pick('replyWords', 'reply_words')) ?? this.defaults.replyWords,
      failStatus: nonNegativeNumber(pick('failStatus', 'fail_status')) ?? this.defaults.failStatus,
    };
  }

  /** A real clip, streamed in quarter-second chunks (see `simulatedSpeech`). */
  async speak(route: UpstreamRoute, request: SpeechCall, signal: AbortSignal): Promise<SpeechStream> {
    this.beforeMediaCall(route, signal);
    return simulatedSpeech(request, signal);
  }

  private beforeMediaCall(route: UpstreamRoute, signal: AbortSignal): void {
    throwIfAborted(signal);
    failIfConfigured(this.optionsFor(route));
  }
}

function toResponse(turn: SimulatedTurn, request: CanonicalRequest): CanonicalResponse {
  const response: CanonicalResponse = {
    id: newId(),
    model: request.model,
    created: Math.floor(Date.now() / 1000),
    text: joinPieces(turn.text),
    toolCalls: turn.toolCalls,
    stopReason: turn.stopReason,
    usage: turn.usage,
  };
  if (turn.reasoning.length > 0) {
    response.reasoning = joinPieces(turn.reasoning);
    response.reasoningSignature = turn.signature;
  }
  if (turn.stopSequence !== undefined) response.stopSequence = turn.stopSequence;
  if (turn.logprobs) response.logprobs = turn.logprobs;
  return response;
}

/** The stream of a turn; `delayed` marks the events that each stand for generated tokens. */
function* streamEvents(turn: SimulatedTurn, request: CanonicalRequest): Generator<{ event: CanonicalStreamEvent; delayed: boolean }> {
  yield { event: { type: 'start', id: newId(), model: request.model, created: Math.floor(Date.now() / 1000) }, delayed: false };
  for (const piece of turn.reasoning) yield { event: { type: 'reasoning_delta', text: piece.text }, delayed: true };
  if (turn.signature) yield { event: { type: 'reasoning_signature', signature: turn.signature }, delayed: false };
  for (const [position, piece] of turn.text.entries()) {
    const logprobs = turn.logprobs?.[position];
    yield { event: logprobs ? { type: 'text_delta', text: piece.text, logprobs: [logprobs] } : { type: 'text_delta', text: piece.text }, delayed: true };
  }
  for (const [index, call] of turn.toolCalls.entries()) {
    yield { event: { type: 'tool_call_start', index, id: call.id, name: call.name }, delayed: false };
    for (const piece of splitTokenPieces(call.arguments)) {
      yield { event: { type: 'tool_call_delta', index, argumentsDelta: piece.text }, delayed: true };
    }
  }
  yield {
    event: turn.stopSequence
      ? { type: 'finish', stopReason: turn.stopReason, stopSequence: turn.stopSequence }
      : { type: 'finish', stopReason: turn.stopReason },
    delayed: false,
  };
  yield { event: { type: 'usage', usage: turn.usage }, delayed: false };
}

function failIfConfigured(options: SimulatorOptions): void {
  if (options.failStatus === undefined) return;
  if (options.failStatus === 0) throw new UpstreamError(0, 'simulated connection failure', true);
  throw UpstreamError.fromStatus(options.failStatus, `simulated upstream failure (HTTP ${options.failStatus})`);
}

/** Waits `ms`, rejecting with `signal.reason` as soon as the signal aborts. */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal);
}

function newId(): string {
  return `sim-${randomUUID()}`;
}

function nonNegativeNumber(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : undefined;
}

function booleanOption(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
