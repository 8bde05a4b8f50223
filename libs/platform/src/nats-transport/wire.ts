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
 */

export const END_FRAME_JSON = '{"kind":"end"}';

const textDecoder = new TextDecoder();

/** The JSON a message carries; an empty message is `undefined`. Throws on text that is not JSON. */
export function decodeJson(data: Uint8Array): unknown {
  return data.length === 0 ? undefined : JSON.parse(textDecoder.decode(data));
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
