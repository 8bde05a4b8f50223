import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Min } from 'class-validator';
import { KeyType } from '../keys';

export const TextFormats = ['chat', 'responses', 'messages'] as const;
export type TextFormat = (typeof TextFormats)[number];

/** The usage route name of each format, as request logs and `/user/me` spell them. */
export const TEXT_ROUTES: Record<TextFormat, string> = {
  chat: 'chat.completions',
  responses: 'responses',
  messages: 'messages',
};

/** Who is calling, as the router needs it for metering; never the key itself. */
export class CallerContext {
  @IsString()
  @Length(1, 64)
  accountId: string;

  @IsString()
  @Length(1, 64)
  keyId: string;

  @IsIn(['master', 'proxy', 'dev'])
  keyType: KeyType;

  @IsString()
  maskedKey: string;

  @IsString()
  ip: string;

  @IsString()
  @Length(1, 128)
  requestId: string;

  /** The client's own id for the request (`x-client-request-id`), for correlation only. */
  @IsOptional()
  @IsString()
  @Length(1, 128)
  clientRequestId?: string;

  /**
   * When the edge admitted the request (ms since the epoch, the edge's clock): the moment its budget
   * windows were counted at. Its usage event is stamped with it, so the ledger counts the charge in
   * the same windows.
   */
  @IsOptional()
  @IsInt()
  @Min(0)
  admittedAt?: number;
}

/** `inference.text`: the client's body in its own format; the router parses, routes and renders. */
export class TextGenerationRequest extends CallerContext {
  @IsIn(TextFormats)
  format: TextFormat;

  @IsObject()
  body: Record<string, unknown>;

  /**
   * The flags of the request's `anthropic-beta` header (messages), which Anthropic upstreams are
   * sent with the body they steer. Absent when there was none.
   */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  betas?: string[];

  /**
   * The output tokens the edge reserved credits for (`reservedOutputCap`): the router never asks
   * the upstream for more. Absent when nothing was reserved (a model not in the catalog).
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  reservedOutputTokens?: number;

  /**
   * The edge takes a stream's events as raw frames (`sse-bytes`, see `TextFrame`) instead of `sse`
   * frames' JSON. A router of the previous release drops the property and sends `sse` frames, which
   * the edge still reads; an edge of the previous release never sets it.
   */
  @IsOptional()
  @IsBoolean()
  rawFrames?: boolean;
}

/**
 * What the router answers `inference.text` with, as a stream of NATS messages:
 * - one `json` frame for a whole reply (or an error before any output), with the HTTP status;
 * - or `sse` frames, each holding complete server-sent-event frames to write as they are. The first
 *   `sse` frame starts a 200 `text/event-stream` response. Each carries the request's input tokens
 *   and the output tokens sent so far (summed per delta), so the edge can bill what reached the
 *   client when the router dies mid-stream;
 * - `heartbeat` frames while the request runs (the first after half a second, then every few
 *   seconds), naming the router replica serving it, so the edge can ask the NATS server whether
 *   that replica is still connected when it goes silent (see `RouterLiveness` in the edge).
 *
 * `last` marks the frame that completes the client's answer (the whole JSON reply, or the stream's
 * final events): the edge ends the HTTP response right after it, without waiting for `end`.
 *
 * When the request asked for `rawFrames`, the stream's events cross as `sse-bytes` frames instead:
 * the same frame with the events' text sent as raw bytes after its JSON head (the platform's
 * `RawFrame`: no JSON string to escape in the router or to parse in the edge), which the edge
 * receives as `body` (the events' UTF-8 bytes, written to the client as they are) and `events`
 * (how many).
 */
export type TextFrame =
  | { kind: 'json'; status: number; body: unknown; /** Seconds, sent as `Retry-After` (a 429). */ retryAfter?: number; last?: boolean }
  | ({ kind: 'sse'; frames: string[] } & SseFrameState)
  | ({ kind: 'sse-bytes'; events: number; body: Uint8Array } & SseFrameState)
  | HeartbeatFrame;

/**
 * What every frame of a stream's events says besides them. A type alias, not an interface, so a head
 * built of it fits the platform's `RawFrame` head (an object type with an index signature).
 */
export type SseFrameState = {
  inputTokens?: number;
  outputTokens?: number;
  last?: boolean;
  /** On the first: the replica serving it. */
  router?: string;
};

/** Proof of life from the router replica serving a request (text, media parts and decisions alike). */
export interface HeartbeatFrame {
  kind: 'heartbeat';
  /** The replica's id: the edge probes `inference.alive.<router>` when the request goes silent. */
  router?: string;
}

export class CancelInferenceEvent {
  @IsString()
  @Length(1, 128)
  requestId: string;

  /**
   * The edge gave up before any answer reached the client and answered it with an error status
   * (the router went silent, or the request timed out): the request is recorded as `error`, which
   * costs nothing, instead of `cancelled`. Absent: the client went away (billed as `cancelled`).
   */
  @IsOptional()
  @IsBoolean()
  abandoned?: boolean;
}

/** Combined `state` and `questions` of one decision, in tokens (spec, Limits). */
export const DECISION_MAX_INPUT_TOKENS = 32_000;

/** The decision model's public id: what a decision without `model` is answered by. */
export const DECISION_MODEL_ID = 'jev';
/** The usage route of decisions (request logs, `/user/me`). */
export const DECISION_ROUTE = 'decisions';

/**
 * `inference.decide`: the decision request body as the client sent it; answered with one `json`
 * frame, preceded by `heartbeat` frames while it runs when `heartbeats` is set (an edge of the
 * previous release does not set it and gets exactly one frame).
 */
export class DecisionRequest extends CallerContext {
  @IsObject()
  body: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  heartbeats?: boolean;
}
