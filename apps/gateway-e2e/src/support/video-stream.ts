import { suiteInfo } from './suite-info';

export interface VideoStreamOptions {
  key: string;
  /** POST body; omitted for the re-attach GET. */
  body?: unknown;
  /** Edge A by default. */
  base?: string;
  headers?: Record<string, string>;
}

/**
 * A video stream read the way the spec tells clients to: line by line, every non-empty line one
 * JSON object (a line that is not JSON fails the test). Events are kept in `events` as they come.
 */
export class VideoStream {
  readonly events: any[] = [];
  private buffer = '';
  private ended = false;
  private readonly decoder = new TextDecoder();
  /** Taken on the first read, so that an error response's JSON body can still be read. */
  private reader?: ReadableStreamDefaultReader<Uint8Array>;

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {}

  /** POST /v1/videos/generations (with `body`) or GET /v1/videos/generations/{id} (with `jobId`). */
  static async open(options: VideoStreamOptions & { jobId?: string }): Promise<VideoStream> {
    const controller = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, accept: 'text/event-stream', ...(options.headers ?? {}) };
    const path = options.jobId === undefined ? '/v1/videos/generations' : `/v1/videos/generations/${encodeURIComponent(options.jobId)}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${options.base ?? suiteInfo().edgeA}${path}`, {
      method: options.jobId === undefined ? 'POST' : 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: controller.signal,
    });
    return new VideoStream(response, controller);
  }

  get id(): string {
    return this.response.headers.get('x-video-job-id') ?? '';
  }

  /** The next object, or null once the stream has ended. */
  async next(): Promise<any | null> {
    for (;;) {
      const newline = this.buffer.indexOf('\n');
      if (newline >= 0) {
        const line = this.buffer.slice(0, newline).trim();
        this.buffer = this.buffer.slice(newline + 1);
        if (line === '') continue;
        let event: unknown;
        try {
          event = JSON.parse(line);
        } catch {
          throw new Error(`a stream line is not JSON: ${line}`);
        }
        if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new Error(`a stream line is not a JSON object: ${line}`);
        this.events.push(event);
        return event;
      }
      this.reader ??= this.response.body?.getReader();
      if (this.ended || !this.reader) {
        if (this.buffer.trim() !== '') throw new Error(`the stream ended inside a line: ${this.buffer}`);
        return null;
      }
      const { done, value } = await this.reader.read();
      if (done) this.ended = true;
      else this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Reads until an object matches; fails if the stream ends first. */
  async until(predicate: (event: any) => boolean, what = 'the expected event'): Promise<any> {
    for (;;) {
      const event = await this.next();
      if (event === null) throw new Error(`the stream ended before ${what}: ${JSON.stringify(this.events)}`);
      if (predicate(event)) return event;
    }
  }

  /** Reads to the end; returns the last object. */
  async final(): Promise<any> {
    let last: any = null;
    for (let event = await this.next(); event !== null; event = await this.next()) last = event;
    return last;
  }

  /** The client goes away (closes the connection). */
  abort(): void {
    this.controller.abort();
  }
}

export const isHeartbeat = (event: any): boolean => event?.heartbeat === true;
export const isProgress = (event: any): boolean => event?.object === 'video.generation.progress';
export const isFinal = (event: any): boolean => event?.object === 'video.generation';

/** The main header of a Motion-JPEG AVI as our writer lays it out (RIFF, LIST hdrl, avih first). */
export function aviHeader(file: Buffer): { riff: string; form: string; frames: number; width: number; height: number; microsPerFrame: number } {
  return {
    riff: file.toString('latin1', 0, 4),
    form: file.toString('latin1', 8, 12),
    microsPerFrame: file.readUInt32LE(32),
    frames: file.readUInt32LE(48),
    width: file.readUInt32LE(64),
    height: file.readUInt32LE(68),
  };
}
