import type { DomainErrorPayload } from '@gateway/errors';
import type { TextFrame } from './text-generation.messages';

/**
 * The `inference.text` exchange on the wire (plain nats.js, no Nest envelope):
 *
 * - request: one NATS message on `inference.text` (queue group `inference-router`), its data the
 *   JSON of a `TextGenerationRequest`, its `reply` the subject the answer goes to, the caller's W3C
 *   trace context in its headers. The edge keeps one wildcard subscription per connection
 *   (`<inbox prefix>.*`) and tells requests apart by the reply subject's last token.
 * - answer: NATS messages on that reply subject, each the JSON of one `TextWireFrame`, in order:
 *   any number of `heartbeat`, `json` and `sse` frames (see `TextFrame`), then exactly one terminal
 *   frame: `end` (the router is done; nothing more comes) or `error` (the request failed before an
 *   answer frame could carry it, e.g. a payload that is not a valid `TextGenerationRequest`). A
 *   request with `rawFrames` gets its stream's events as raw `sse-bytes` frames instead of `sse`
 *   ones: byte 0x1E, the frame's JSON without the events, a line feed, the events' bytes (the
 *   platform's `RawFrame`); every other frame stays JSON.
 * - bundles: a request with the header `Gateway-Frames: bundle` (the edge's, on every stream
 *   request) says its caller takes several streams' frames in one message. The router then sends
 *   each of its frames, in order, inside a bundle published to the reply subject's prefix with the
 *   last token `_b` (`<inbox prefix>._b`), one per caller per turn of its event loop: byte 0x1D,
 *   then per frame its reply subject's last token, a space, its length in UTF-8 bytes in decimal, a
 *   line feed and the message data it would have had alone. A frame over 64 Ki characters still
 *   goes alone to its reply subject, after the bundle holding the frames before it
 *   (`libs/platform/src/nats-transport/frame-bundles.ts`).
 * - a NATS "no responders" status message (503, empty data) on the reply subject means no router is
 *   subscribed.
 *
 * This is the wire of every stream subject (`Rpc` table, `kind: 'stream'`). The router validates
 * the request with the JSON schema generated from the `TextGenerationRequest` DTO (compiled once,
 * ajv); unknown properties are dropped, so an edge newer than the router is not refused for them.
 */
export type ErrorFrame = { kind: 'error'; error: DomainErrorPayload };
export type EndFrame = { kind: 'end' };
/** What a stream subject's reply subject carries: the contract's frames, then one end or error frame. */
export type StreamFrame<Reply> = Reply | ErrorFrame | EndFrame;
export type TextWireFrame = StreamFrame<TextFrame>;
