import type { ErrorObject } from 'ajv';
import type { ErrorFrame } from '@gateway/contracts';
import { DomainErrorPayload, ErrorCode, isDomainErrorPayload } from '@gateway/errors';

/**
 * The NATS wire of every subject (see docs/architecture.md, "NATS"): a request's data is the JSON
 * of its contract's DTO, nothing around it; the caller's trace context rides in the headers. The
 * answer, on the request's reply subject:
 * - `request` subjects: one message, the JSON of the reply, or an error frame;
 * - `stream` subjects: any number of reply frames, then exactly one end or error frame.
 * No reply contract has `kind: 'end'` or `kind: 'error'`, so frames need no envelope either. The
 * frame types are the contracts' (`StreamFrame`, `libs/contracts/src/inference/text-generation.wire.ts`).
 * A stream's caller that says so in a header gets its frames in bundles instead, one message per
 * turn carrying several streams' frames (`frame-bundles.ts`).
 */

export const END_FRAME_JSON = '{"kind":"end"}';

const textDecoder = new TextDecoder();

/** The JSON a message carries; an empty message is `undefined`. Throws on text that is not JSON. */
export function decodeJson(data: Uint8Array): unknown {
  return data.length === 0 ? undefined : JSON.parse(textDecoder.decode(data));
}

/** The first byte of a raw frame (ASCII record separator): no JSON text starts with it. */
const RAW_FRAME_MARK = 0x1e;
const LINE_FEED = 0x0a;

/**
 * A stream frame whose bulk crosses the wire as it is rather than as a JSON string: one message of
 * the mark byte (0x1E), the JSON of `head`, a line feed (JSON text holds none: it escapes them),
 * then `body`'s UTF-8 bytes. The receiver gets `head`'s properties with `body` as those bytes
 * (`decodeFrame`), unparsed and uncopied: an edge writes a stream's events to its client without
 * JSON-decoding them, and the sender skips escaping them into a JSON string. Only a caller that
 * asked for raw frames is sent them (the text contract's `rawFrames`), so an edge of the previous
 * release keeps getting JSON.
 */
export class RawFrame {
  constructor(
    readonly head: { kind: string } & Record<string, unknown>,
    readonly body: string,
  ) {}

  /**
   * This frame and `later` (the next frame of the same stream) as one, or undefined when they do not
   * join (the default). A stream's sender holds a joinable frame until its connection's next write
   * and joins the frames that follow before then (`NatsTransportServer`): the events an upstream
   * read brought together cross as one message. A subclass says how its heads combine.
   */
  joinedWith(later: RawFrame): RawFrame | undefined {
    void later;
    return undefined;
  }
}

/** A stream frame's message data: a RawFrame as such, anything else as its JSON. */
export function encodeFrame(frame: unknown): string {
  return frame instanceof RawFrame ? `\u001e${JSON.stringify(frame.head)}\n${frame.body}` : JSON.stringify(frame);
}

/**
 * A message's frame: a raw frame's head with `body` its bytes (a view of the message's data), or the
 * JSON it carries (`decodeJson`). Throws on a message that is neither.
 */
export function decodeFrame(data: Uint8Array): unknown {
  if (data[0] !== RAW_FRAME_MARK) return decodeJson(data);
  const end = data.indexOf(LINE_FEED, 1);
  if (end < 0) throw new SyntaxError('A raw frame without the end of its head');
  const head: unknown = JSON.parse(textDecoder.decode(data.subarray(1, end)));
  if (typeof head !== 'object' || head === null || Array.isArray(head)) throw new SyntaxError('A raw frame whose head is not an object');
  return { ...head, body: data.subarray(end + 1) };
}

export function isErrorFrame(value: unknown): value is ErrorFrame {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'error';
}

/** What crosses the wire for a failure: a DomainErrorPayload; anything unexpected as an internal error. */
export function errorFrame(error: unknown): ErrorFrame {
  return { kind: 'error', error: isDomainErrorPayload(error) ? error : { code: ErrorCode.Internal, message: 'Internal error' } };
}

/** The first schema violation as the spec's error: the field's dotted path in `param`. */
export function invalidPayload(subject: string, errors: ErrorObject[] | null | undefined): DomainErrorPayload {
  const error = errors?.[0];
  if (!error) return { code: ErrorCode.InvalidRequest, message: `Invalid ${subject} payload` };
  const path = error.instancePath.slice(1).replace(/\//g, '.');
  const missing = error.keyword === 'required' ? String((error.params as { missingProperty?: string }).missingProperty) : undefined;
  const param = missing ? (path ? `${path}.${missing}` : missing) : path;
  const detail =
    error.keyword === 'enum' ? `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : (error.message ?? 'is invalid');
  if (!param) return { code: ErrorCode.InvalidRequest, message: `The ${subject} payload ${detail}` };
  return { code: ErrorCode.InvalidRequest, message: missing ? `${param} is required` : `${param} ${detail}`, param };
}
