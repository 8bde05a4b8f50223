import type {
  CanonicalRequest,
  CanonicalResponse,
  CanonicalStreamEvent,
  EmbeddingRequest,
  EmbeddingResult,
  ImageEditRequest,
  ImageRequest,
  ImageResult,
  ModerationRequest,
  ModerationResult,
  TranscriptionRequest,
  TranscriptionResult,
  SpeechCall,
  SpeechStream,
} from '@gateway/canonical';
import type { ResolvedRoute } from '@gateway/catalog';
import type { GeneratedVideo, VideoRequest, VideoStatus } from './video';
import { DomainError, ErrorCode } from '@gateway/errors';

/** Where and how one catalog model is served: which adapter, which upstream model, which credentials. */
export interface UpstreamRoute {
  /** The adapter's name in the registry (`libs/providers/src/registry.ts`). */
  adapter: string;
  /** Upstream API root, e.g. `https://api.openai.com/v1` or `https://api.anthropic.com`. */
  baseUrl?: string;
  upstreamModel: string;
  apiKey?: string;
  /** simulator only (see `SimulatorOptions`). */
  options?: Record<string, unknown>;
  /** The upstream model has the provider's native structured outputs (catalog `structured_outputs`). */
  structuredOutputs?: boolean;
}

/** The route that served a call: what the adapter used, plus its catalog label. */
export interface ServedRoute extends UpstreamRoute {
  label: string;
}

/** A catalog route as its adapter sees it. */
export const toUpstreamRoute = (route: ResolvedRoute): ServedRoute => ({
  label: route.label,
  adapter: route.adapter,
  baseUrl: route.base_url,
  upstreamModel: route.upstream_model,
  apiKey: route.apiKey,
  options: route.options,
  structuredOutputs: route.structured_outputs,
});

/**
 * One provider's wire format, every modality: text (`complete`, `stream`, `countInputTokens`),
 * embeddings, moderations, images and video, the last ones optional — only adapters whose
 * providers serve them implement them. Adapters are stateless apart from their connection pool, so
 * one instance serves every route of its kind, in the router and in the video worker alike. The
 * router's methods honour `signal`: when it fires they stop
 * and reject with `abortedError(signal)` — the caller's `signal.reason`, never wrapped in an
 * `UpstreamError`, except a `TimeoutError` reason (`AbortSignal.timeout`), which becomes a
 * retryable `UpstreamError` with status 0.
 */
export interface ProviderAdapter {
  /** False for providers that call no HTTP API (the simulator); a route of any other needs `base_url`. */
  readonly needsBaseUrl?: boolean;
  /**
   * Sends the client's `reasoning.display` to its upstream, which applies it (Anthropic's
   * `thinking.display`): the reasoning it returns is what the client asked to see. Otherwise the
   * gateway applies the display modes it knows to what the adapter returns.
   */
  readonly appliesReasoningDisplay?: boolean;
  complete(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<CanonicalResponse>;
  /** Yields start, deltas, finish, usage — usage always, whatever `request.includeUsage` says. */
  stream(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): AsyncIterable<CanonicalStreamEvent>;
  /** Embeddings, moderations and images: only adapters whose providers serve them implement these. */
  embed?(route: UpstreamRoute, request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult>;
  moderate?(route: UpstreamRoute, request: ModerationRequest, signal: AbortSignal): Promise<ModerationResult>;
  generateImages?(route: UpstreamRoute, request: ImageRequest, signal: AbortSignal): Promise<ImageResult>;
  /** `/images/edits`: the uploaded images (opened from the staging store for each attempt) edited. */
  editImages?(route: UpstreamRoute, request: ImageEditRequest, signal: AbortSignal): Promise<ImageResult>;
  /** Transcriptions and translations of an uploaded audio file, streamed to the upstream. */
  transcribe?(route: UpstreamRoute, request: TranscriptionRequest, signal: AbortSignal): Promise<TranscriptionResult>;
  /**
   * The upstream's own count of the request's input tokens (a provider counting endpoint, no
   * generation); undefined when the upstream does not serve one, and the router counts itself.
   */
  countInputTokens?(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<number | undefined>;
  /**
   * Video, in three steps that `generateVideo` (`video.ts`) drives: start an upstream generation
   * (its id), poll it, download the finished file. They fail with a `VideoJobError`, and stop with
   * `signal`'s reason when the worker shuts down.
   */
  createVideo?(route: UpstreamRoute, request: VideoRequest, signal: AbortSignal): Promise<string>;
  pollVideo?(route: UpstreamRoute, id: string, signal: AbortSignal): Promise<VideoStatus>;
  downloadVideo?(route: UpstreamRoute, id: string, request: VideoRequest, finished: VideoStatus, signal: AbortSignal): Promise<GeneratedVideo>;
  /**
   * Speech: resolves once the upstream accepted the call (its failures before any audio are thrown
   * here, so the route's fallback applies), then streams the audio as it comes.
   */
  speak?(route: UpstreamRoute, request: SpeechCall, signal: AbortSignal): Promise<SpeechStream>;
  /** Releases the connection pool at shutdown, for adapters that hold one. */
  close?(): Promise<void>;
}

/**
 * A failed upstream call. `retryable` tells the router whether trying again (or another route)
 * can help: connect errors, timeouts, 429 and 5xx can; other 4xx are the caller's fault and are
 * passed through to the client with their status and the upstream's message.
 */
export class UpstreamError extends Error {
  constructor(
    /** Upstream HTTP status, or 0 for a connect error/timeout. */
    readonly status: number,
    message: string,
    readonly retryable: boolean,
    /** The upstream's parsed error body (or raw text), for logs. */
    readonly body?: unknown,
    /** The upstream's `Retry-After` (a 429's), in seconds: how long the route's breaker stays open. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  /** An HTTP-status error, retryable by the rule above. */
  static fromStatus(status: number, message: string, body?: unknown, retryAfterSeconds?: number): UpstreamError {
    return new UpstreamError(status, message, isRetryableStatus(status), body, retryAfterSeconds);
  }
}

/**
 * A provider refusing the gateway's own key for it (401, 403): the operator's problem, not the
 * caller's, whose key was fine. The caller gets a 502 that says so (never the provider's words
 * about our key), and the model's next route is tried.
 */
export function isCredentialRefusal(error: UpstreamError): boolean {
  return error.status === 401 || error.status === 403;
}

/**
 * An upstream failure as the caller sees it: a 4xx about the request passed through with its
 * status and the upstream's message; a 429 as our 429; refused credentials, 5xx and broken
 * streams as a 502, and no answer in time as a 504.
 */
export function upstreamDomainError(error: UpstreamError): DomainError {
  const cause = { cause: error };
  if (isCredentialRefusal(error)) {
    return new DomainError(
      ErrorCode.UpstreamFailed,
      "The upstream provider refused the gateway's credentials for this model; the gateway's operator must fix its provider key",
      undefined,
      cause,
    );
  }
  if (error.status === 429) {
    // The provider's Retry-After, when it sent one, is the client's too.
    const wait = error.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(error.retryAfterSeconds));
    return new DomainError(ErrorCode.RateLimited, error.message, undefined, { ...cause, retryAfterSeconds: wait });
  }
  if (error.status >= 400 && error.status < 500) return new DomainError(ErrorCode.InvalidRequest, error.message, undefined, { ...cause, status: error.status });
  const code = error.status === 0 ? ErrorCode.UpstreamTimeout : ErrorCode.UpstreamFailed;
  return new DomainError(code, `The upstream provider failed: ${error.message}`, undefined, cause);
}

/** 429 (rate limited) and 5xx (including Anthropic's 529 "overloaded") are worth retrying. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * What an adapter rejects with once `signal` has aborted: the caller's own reason (a cancellation
 * is not an upstream failure), except a `TimeoutError` (`AbortSignal.timeout`), which is one.
 */
export function abortedError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  // By name, not instanceof: DOMException may come from another realm (e.g. under jest).
  if ((reason as { name?: unknown } | null)?.name === 'TimeoutError') return new UpstreamError(0, 'upstream request timed out', true);
  return reason;
}
