import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from 'nats';
import { beforeNextWrite, heldGrew } from '../nats-write-coalescing';

/**
 * Several streams' frames in one NATS message (see `wire.ts`, "bundles"). A caller whose reply
 * subjects share one wildcard subscription (`NatsRpcClient`: `<prefix>.<token>`) says it takes
 * bundles with this header on a stream request; the server then sends that stream's frames, in
 * order, inside the bundles it publishes to `<prefix>.` + `BUNDLE_TOKEN` instead of one message
 * each to `<prefix>.<token>`. A caller that does not send the header gets one message per frame.
 */
export const FRAMES_HEADER = 'Gateway-Frames';
export const FRAMES_BUNDLED = 'bundle';

/**
 * The last token of a bundle's subject. A reply subject's own last token is the client's sequence
 * number in base 36 (`[0-9a-z]+`), so it can never be this one.
 */
export const BUNDLE_TOKEN = '_b';

/** The first byte of a bundle (ASCII group separator): neither a JSON text nor a raw frame starts with it. */
const BUNDLE_MARK = 0x1d;
const BUNDLE_MARK_TEXT = String.fromCharCode(BUNDLE_MARK);

/**
 * The most characters of frames one bundle carries before it is published and another begins
 * (at up to 3 bytes each, far under NATS's 1 MiB message limit). A frame longer than this alone is
 * sent on its own, to its reply subject, after the bundle that holds the stream's earlier frames.
 */
export const MAX_BUNDLE_LENGTH = 64 * 1024;

/** The headers of a bundling caller with no trace context to send (one object, never changed). */
const BUNDLED_ONLY = natsHeaders();
BUNDLED_ONLY.set(FRAMES_HEADER, FRAMES_BUNDLED);

/** `headers` (a request's trace context, or none) with the bundle opt-in added. */
export function withBundleOptIn(headers: MsgHdrs | undefined): MsgHdrs {
  if (!headers) return BUNDLED_ONLY;
  headers.set(FRAMES_HEADER, FRAMES_BUNDLED);
  return headers;
}

/** Whether a request's headers say its caller takes bundles. */
export function takesBundles(headers: MsgHdrs | undefined): boolean {
  return headers?.get(FRAMES_HEADER) === FRAMES_BUNDLED;
}

interface OpenBundle {
  parts: string[];
  length: number;
}

/**
 * A server connection's bundles being filled this turn, one per caller's reply prefix. A frame
 * added waits, with every other frame for that caller, for the connection's next write (the write
 * coalesced once per turn, `beforeNextWrite`), when each caller's bundle is published as one
 * message: a caller relaying N streams' chunks hears one message per turn instead of N. The frames
 * keep their order: a stream's frames are added in the order it sends them, and a bundle that is
 * full is published before the next is begun.
 *
 * The entry of one frame: its reply subject's last token, a space, its length in UTF-8 bytes in
 * decimal, a line feed, then the frame's message data as it would have crossed alone (`encodeFrame`).
 */
export class FrameBundler {
  private readonly open = new Map<string, OpenBundle>();
  private queued = false;

  constructor(
    private readonly connection: NatsConnection,
    /** Publishes one message (the connection's publish, with the caller's error handling). */
    private readonly publish: (subject: string, data: string) => void,
  ) {}

  /**
   * What sends a frame's message data for `replySubject` in a bundle; undefined for a subject with
   * no prefix to bundle under (one token: it is sent alone).
   */
  senderTo(replySubject: string): ((frame: string) => void) | undefined {
    const split = replySubject.lastIndexOf('.');
    if (split <= 0) return undefined;
    const prefix = replySubject.slice(0, split);
    const token = replySubject.slice(split + 1);
    return (frame) => this.add(prefix, token, frame);
  }

  /**
   * Sends `frame` (a frame's message data) for the reply subject `prefix.token`, in a bundle. On a
   * connection whose writes are not coalesced there is no turn to gather in: it is published alone.
   */
  private add(prefix: string, token: string, frame: string): void {
    let bundle = this.open.get(prefix);
    if (frame.length > MAX_BUNDLE_LENGTH) {
      if (bundle) this.release(prefix, bundle);
      return this.publish(`${prefix}.${token}`, frame);
    }
    if (bundle && bundle.length + frame.length > MAX_BUNDLE_LENGTH) {
      this.release(prefix, bundle);
      bundle = undefined;
    }
    if (!bundle) {
      bundle = { parts: [BUNDLE_MARK_TEXT], length: 0 };
      this.open.set(prefix, bundle);
    }
    bundle.parts.push(`${token} ${Buffer.byteLength(frame)}\n`, frame);
    bundle.length += frame.length;
    if (this.queued) return heldGrew(this.connection, frame.length);
    this.queued = true;
    if (!beforeNextWrite(this.connection, this.flush, frame.length)) this.flush();
  }

  /** Publishes every open bundle (the connection is about to write). */
  private readonly flush = (): void => {
    this.queued = false;
    for (const [prefix, bundle] of this.open) this.release(prefix, bundle);
  };

  private release(prefix: string, bundle: OpenBundle): void {
    this.open.delete(prefix);
    this.publish(`${prefix}.${BUNDLE_TOKEN}`, bundle.parts.join(''));
  }
}

const LINE_FEED = 0x0a;
const SPACE = 0x20;
const ZERO = 0x30;

/**
 * Calls `onFrame` with each frame of a bundle's message data, in order: the reply subject's last
 * token and a view of the frame's message data (no copy). Throws on data that is not a bundle, or
 * whose entries do not add up (nothing after a malformed entry is delivered).
 */
export function forEachBundledFrame(data: Uint8Array, onFrame: (token: string, frame: Uint8Array) => void): void {
  if (data[0] !== BUNDLE_MARK) throw new SyntaxError('Not a bundle');
  let at = 1;
  while (at < data.length) {
    const space = data.indexOf(SPACE, at);
    if (space < 0) throw new SyntaxError('A bundle entry without its length');
    let token = '';
    for (let i = at; i < space; i++) token += String.fromCharCode(data[i]);
    let length = 0;
    let end = space + 1;
    for (; end < data.length && data[end] !== LINE_FEED; end++) {
      const digit = data[end] - ZERO;
      if (digit < 0 || digit > 9) throw new SyntaxError('A bundle entry whose length is not a number');
      length = length * 10 + digit;
    }
    if (end === space + 1 || end >= data.length || end + 1 + length > data.length) throw new SyntaxError('A bundle entry cut short');
    at = end + 1 + length;
    onFrame(token, data.subarray(end + 1, at));
  }
}
