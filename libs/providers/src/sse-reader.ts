import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { Readable } from 'node:stream';

/**
 * What a stream's server-sent events become: `event` maps one event to the items it yields (none
 * to skip it; a throw fails the stream after the items before it), `end` gives the items after the
 * body's last event (a throw: the stream was cut short).
 */
export interface SseDecoder<T> {
  event(message: EventSourceMessage): readonly T[];
  end?(): readonly T[];
}

/** What a decoder returns for an event that yields nothing (shared: never written to). */
export const NO_ITEMS: readonly never[] = [];

/** Items held before the body is paused: a reader that stops pulling does not buffer the upstream's whole answer. */
const HIGH_WATER_ITEMS = 256;

const NO_MORE: IteratorResult<never> = Object.freeze({ done: true, value: undefined });

/**
 * The items of a streamed response body's server-sent events, as an async iterator that is fed as
 * the body's bytes arrive: each read is parsed (`eventsource-parser`) and decoded there and then,
 * and `next()` hands out what is held, waiting only when nothing is. One promise per item, where a
 * chain of async generators (the body's iterator, the SSE parser's, the adapter's) cost one per
 * layer and item. The request goes out on the first `next()` (`open`: its failure is that call's);
 * a failure of the body or of `decoder` reaches the reader after the items before it; `return()`
 * (a `for await` left early) closes the body. One read at a time: `next()` is called again only
 * once the previous call settled, as `for await` does.
 */
export class SseReader<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private taken = 0;
  /** No item will be added: the body ended, failed, or the reader returned. */
  private ended = false;
  private failure: { error: unknown } | undefined;
  private waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  private body: Readable | undefined;
  private opened = false;
  private readonly parser: EventSourceParser;
  private readonly text = new TextDecoder();

  constructor(
    private readonly open: () => Promise<Readable>,
    private readonly decoder: SseDecoder<T>,
    /** What a body's read error becomes (e.g. an `UpstreamError`, or the caller's abort reason). */
    private readonly readError: (error: unknown) => unknown,
  ) {
    this.parser = createParser({ onEvent: (message) => this.hold(this.decoder.event(message)) });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.taken < this.items.length) return Promise.resolve({ done: false, value: this.take() });
    if (this.failure) {
      const { error } = this.failure;
      this.failure = undefined;
      return Promise.reject(error);
    }
    if (this.ended) return Promise.resolve(NO_MORE);
    if (!this.opened) return this.start();
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.items = [];
    this.taken = 0;
    this.failure = undefined;
    this.close();
    return Promise.resolve(NO_MORE);
  }

  private async start(): Promise<IteratorResult<T>> {
    this.opened = true;
    let body: Readable;
    try {
      body = await this.open();
    } catch (error) {
      this.ended = true;
      throw error;
    }
    this.body = body;
    body.on('error', (error: unknown) => this.fail(this.readError(error)));
    if (this.ended) {
      body.destroy(); // returned while the request was on its way
      return NO_MORE;
    }
    body.on('data', (chunk: Uint8Array) => this.feed(chunk));
    body.on('end', () => this.finish());
    return this.next();
  }

  private take(): T {
    const item = this.items[this.taken++]!;
    if (this.taken === this.items.length) {
      this.items = [];
      this.taken = 0;
      if (this.body?.isPaused() && !this.ended) this.body.resume();
    }
    return item;
  }

  private hold(items: readonly T[]): void {
    for (const item of items) this.items.push(item);
  }

  private feed(chunk: Uint8Array): void {
    if (this.ended) return;
    try {
      this.parser.feed(this.text.decode(chunk, { stream: true }));
    } catch (error) {
      return this.fail(error);
    }
    if (this.items.length - this.taken >= HIGH_WATER_ITEMS) this.body?.pause();
    this.wake();
  }

  private finish(): void {
    if (this.ended) return;
    try {
      // An event the body ends in the middle of (no blank line after it) is not dispatched, as the SSE standard says.
      this.parser.feed(this.text.decode());
      this.hold(this.decoder.end?.() ?? NO_ITEMS);
    } catch (error) {
      return this.fail(error);
    }
    this.ended = true;
    this.wake();
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.failure = { error };
    this.close();
    this.wake();
  }

  private close(): void {
    this.ended = true;
    if (this.body && !this.body.readableEnded) this.body.destroy();
  }

  /** Settles a pending `next()` with what is held now, if anything is (an item, the failure, the end). */
  private wake(): void {
    const waiting = this.waiting;
    if (!waiting || (this.taken === this.items.length && !this.ended)) return;
    this.waiting = undefined;
    if (this.taken < this.items.length) return waiting.resolve({ done: false, value: this.take() });
    const failure = this.failure;
    this.failure = undefined;
    if (failure) waiting.reject(failure.error);
    else waiting.resolve(NO_MORE);
  }
}
