import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { encodeVideoEvent, HEARTBEAT, VideoStreamEvent } from './video-events';

const STREAM_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Proxies such as nginx must not buffer the stream.
  'x-accel-buffering': 'no',
};

/**
 * One client's video stream: a 200 `text/event-stream` response of JSON lines, a heartbeat every
 * interval until the final object, then the end. Writes after the end, or after the client left, are
 * dropped: the job goes on regardless.
 */
export class VideoEventStream {
  private heartbeat?: NodeJS.Timeout;
  private ended = false;

  constructor(
    private readonly raw: ServerResponse,
    private readonly heartbeatMs: number,
  ) {}

  get finished(): boolean {
    return this.ended || this.raw.destroyed || this.raw.writableEnded;
  }

  open(headers: OutgoingHttpHeaders): void {
    this.raw.writeHead(200, { ...headers, ...STREAM_HEADERS });
    this.heartbeat = setInterval(() => this.send(HEARTBEAT), this.heartbeatMs);
  }

  send(event: VideoStreamEvent): void {
    if (this.finished) return;
    this.raw.write(encodeVideoEvent(event));
  }

  /** Writes the final object and ends the response. */
  finish(event: VideoStreamEvent): void {
    this.send(event);
    this.close();
  }

  close(): void {
    clearInterval(this.heartbeat);
    if (this.ended) return;
    this.ended = true;
    if (!this.raw.destroyed && !this.raw.writableEnded) this.raw.end();
  }
}
