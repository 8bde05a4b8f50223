import type { EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { abortedError, UpstreamError } from './provider-adapter';
import { SseReader, type SseDecoder } from './sse-reader';

/** Connection-pool and timeout settings of one adapter's HTTP client. */
export interface UpstreamHttpOptions {
  /** Max sockets per upstream origin (default 4096; UPSTREAM_MAX_CONNECTIONS). */
  connections?: number;
  /** How long an idle keep-alive socket stays in the pool (default 30 s). */
  keepAliveTimeoutMs?: number;
  connectTimeoutMs?: number;
  /**
   * Wait for response headers (default 10 min): a non-streamed completion only sends headers
   * once the whole answer is generated, which can take minutes for reasoning models.
   */
  headersTimeoutMs?: number;
  /** Max silence between body chunks (default 5 min). */
  bodyTimeoutMs?: number;
}

/**
 * The HTTP side shared by the openai and anthropic adapters: ONE keep-alive undici `Agent` per
 * adapter instance (so the TLS connections to an upstream are pooled and reused across
 * requests), JSON POSTs, SSE parsing and the mapping of failures to `UpstreamError`.
 */
export class UpstreamHttpClient {
  private readonly agent: Agent;

  constructor(options: UpstreamHttpOptions = {}) {
    this.agent = new Agent({
      connections: options.connections ?? 4096,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
      headersTimeout: options.headersTimeoutMs ?? 600_000,
      bodyTimeout: options.bodyTimeoutMs ?? 300_000,
    });
  }

  /** POSTs JSON and returns the parsed 2xx JSON body; anything else becomes an `UpstreamError`. */
  async postJson(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<unknown> {
    const response = await this.post(url, headers, body, signal);
    let text: string;
    try {
      text = await response.body.text();
    } catch (err) {
      throw toUpstreamError(err, signal);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw malformedResponse('a body that is not JSON', text.slice(0, 1000));
    }
  }

  /**
   * POSTs JSON (`body()`, built then) on the first read and yields what `decoder` makes of the 2xx
   * response's server-sent events, decoded as they arrive (`SseReader`). Stopping the iteration
   * early (or aborting) closes the response; reading it to the end keeps the socket reusable.
   */
  streamSse<T>(url: string, headers: Record<string, string>, body: () => unknown, signal: AbortSignal, decoder: SseDecoder<T>): AsyncIterableIterator<T> {
    const open = async () => (await this.post(url, { accept: 'text/event-stream', ...headers }, body(), signal)).body;
    return new SseReader(open, decoder, (error) => toUpstreamError(error, signal));
  }

  /** POSTs JSON on the first read and yields the server-sent events of the 2xx response, as `streamSse`. */
  postSse(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): AsyncIterableIterator<EventSourceMessage> {
    return this.streamSse(url, headers, () => body, signal, { event: (message) => [message] });
  }

  /**
   * GETs a file (an image an upstream returned by URL): its bytes, or an `UpstreamError` for a
   * failed or oversized download. No credentials are sent: such URLs are pre-signed.
   */
  async getBytes(url: string, signal: AbortSignal, maxBytes = 64 * 1024 * 1024): Promise<Buffer> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, { method: 'GET', dispatcher: this.agent, signal });
    } catch (err) {
      throw toUpstreamError(err, signal);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) throw await httpError(response, signal);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          response.body.destroy();
          throw malformedResponse(`a file larger than ${maxBytes} bytes at ${url}`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      throw toUpstreamError(err, signal);
    }
    return Buffer.concat(chunks);
  }

  /**
   * POSTs a streamed body of a known length (a multipart upload) and returns the 2xx response's
   * content type and text; anything else becomes an `UpstreamError`.
   */
  async postStream(
    url: string,
    headers: Record<string, string>,
    body: Readable,
    length: number,
    signal: AbortSignal,
  ): Promise<{ contentType: string; text: string }> {
    const response = await this.postUpload(url, headers, body, length, signal);
    try {
      const contentType = response.headers['content-type'];
      return { contentType: (Array.isArray(contentType) ? contentType[0] : contentType) ?? '', text: await response.body.text() };
    } catch (err) {
      throw toUpstreamError(err, signal);
    }
  }

  /**
   * POSTs a streamed body of a known length, as `postStream`, and returns the 2xx response's body to
   * be read as it arrives (a streamed transcription's events), as `postStreamed` does.
   */
  async postUploadStreamed(url: string, headers: Record<string, string>, body: Readable, length: number, signal: AbortSignal): Promise<AsyncIterable<Buffer>> {
    return readAsItArrives(await this.postUpload(url, headers, body, length, signal), signal);
  }

  /**
   * POSTs JSON and returns the 2xx response's content type and body, to be read as it arrives
   * (audio); read errors become `UpstreamError`s. Stopping the iteration early closes the response.
   */
  async postStreamed(
    url: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal,
  ): Promise<{ contentType?: string; body: AsyncIterable<Buffer> }> {
    const response = await this.post(url, headers, body, signal);
    const header = response.headers['content-type'];
    return { contentType: Array.isArray(header) ? header[0] : header, body: readAsItArrives(response, signal) };
  }

  /** Closes the pool: idle sockets at once, busy ones when their requests finish. */
  close(): Promise<void> {
    return this.agent.close();
  }

  /** POSTs a streamed body of a known length; a non-2xx answer becomes an `UpstreamError`. */
  private async postUpload(
    url: string,
    headers: Record<string, string>,
    body: Readable,
    length: number,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, { method: 'POST', dispatcher: this.agent, headers: { ...headers, 'content-length': String(length) }, body, signal });
    } catch (err) {
      body.destroy();
      throw toUpstreamError(err, signal);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) throw await httpError(response, signal);
    return response;
  }

  private async post(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw toUpstreamError(err, signal);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) throw await httpError(response, signal);
    return response;
  }
}

/** A response's body as it arrives; read errors become `UpstreamError`s, and stopping early closes it. */
async function* readAsItArrives(response: Dispatcher.ResponseData, signal: AbortSignal): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of response.body) yield chunk as Buffer;
  } catch (err) {
    throw toUpstreamError(err, signal);
  } finally {
    if (!response.body.readableEnded) response.body.destroy();
  }
}

/** A 2xx response we cannot use: reported as 502 (bad gateway) and retryable, as a flaky upstream would be. */
export function malformedResponse(what: string, body?: unknown): UpstreamError {
  return new UpstreamError(502, `upstream returned ${what}`, true, body);
}

/**
 * The upstream's own error message: OpenAI and Anthropic both send `{error: {message}}`;
 * OpenAI-compatible servers vary (`{error: "..."}`, `{message}`, `{detail}`, plain text).
 */
export function upstreamErrorMessage(body: unknown, status: number): string {
  if (typeof body === 'string') return body.trim().slice(0, 500) || `upstream HTTP ${status}`;
  const record = asRecord(body);
  const error = record?.['error'];
  const candidates = [asRecord(error)?.['message'], error, record?.['message'], record?.['detail']];
  const message = candidates.find((value): value is string => typeof value === 'string' && value.length > 0);
  return message ?? `upstream HTTP ${status}`;
}

async function httpError(response: Dispatcher.ResponseData, signal: AbortSignal): Promise<UpstreamError> {
  let text = '';
  try {
    text = await response.body.text();
  } catch (err) {
    const mapped = toUpstreamError(err, signal);
    if (!(mapped instanceof UpstreamError)) throw mapped;
  }
  const body = parseJsonOr(text);
  return UpstreamError.fromStatus(
    response.statusCode,
    upstreamErrorMessage(body, response.statusCode),
    body,
    retryAfterSeconds(response.headers['retry-after']),
  );
}

/** A `Retry-After` header (seconds, or an HTTP date) in seconds; undefined when absent or unreadable. Capped at an hour. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : (Date.parse(value) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(3600, Math.max(0, seconds));
}

/**
 * What to throw for an error from undici. Cancellation by our caller is rethrown as is (its
 * `signal.reason`); a `TimeoutError` reason, undici's own timeouts and network failures become
 * retryable `UpstreamError`s with status 0; anything else (e.g. an invalid URL) is a bug or
 * misconfiguration and is rethrown unchanged.
 */
export function toUpstreamError(err: unknown, signal: AbortSignal): unknown {
  if (err instanceof UpstreamError) return err;
  if (signal.aborted) return abortedError(signal);
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamError(0, `upstream timed out: ${message}`, true);
  }
  // UND_ERR_SOCKET & co., and system errors (ECONNREFUSED, ENOTFOUND, ECONNRESET…) but not Node's ERR_* usage errors.
  if (typeof code === 'string' && code !== 'UND_ERR_INVALID_ARG' && (code.startsWith('UND_ERR') || /^E[A-Z0-9]+$/.test(code))) {
    return new UpstreamError(0, `upstream connection failed: ${message}`, true);
  }
  return err;
}

export function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Joins an API root and a path without doubling or dropping slashes. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
