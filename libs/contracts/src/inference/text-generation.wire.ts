import type { DomainErrorPayload } from '@gateway/errors';
import { TextFormats, type TextFrame } from './text-generation.messages';

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
 *   answer frame could carry it, e.g. a payload that is not a valid `TextGenerationRequest`).
 * - a NATS "no responders" status message (503, empty data) on the reply subject means no router is
 *   subscribed.
 *
 * The router validates the request against `TEXT_GENERATION_REQUEST_SCHEMA` (compiled once, ajv);
 * unknown properties are dropped, so an edge newer than the router is not refused for them.
 */
export type TextWireFrame = TextFrame | { kind: 'error'; error: DomainErrorPayload } | { kind: 'end' };

const boundedString = (minLength: number, maxLength: number) => ({ type: 'string', minLength, maxLength }) as const;

/** JSON schema of `TextGenerationRequest` (the same rules as its class-validator decorators). */
export const TEXT_GENERATION_REQUEST_SCHEMA = {
  type: 'object',
  required: ['accountId', 'keyId', 'keyType', 'maskedKey', 'ip', 'requestId', 'format', 'body'],
  additionalProperties: false,
  properties: {
    accountId: boundedString(1, 64),
    keyId: boundedString(1, 64),
    keyType: { enum: ['master', 'proxy', 'dev'] },
    maskedKey: { type: 'string' },
    ip: { type: 'string' },
    requestId: boundedString(1, 128),
    clientRequestId: boundedString(1, 128),
    format: { enum: [...TextFormats] },
    body: { type: 'object' },
    reservedOutputTokens: { type: 'integer', minimum: 1 },
  },
} as const;
