import { KeyPrefixes } from '../keys';
import { isStorableText } from '../validation';
import { USAGE_STATUSES } from './usage.events';

/** Why metering set a usage event aside (the `reason` label of `gateway_usage_events_dead_lettered_total`). */
export const USAGE_DEAD_REASONS = [
  /** The message body is not JSON. */
  'not_json',
  /** A text field holds what PostgreSQL cannot store (NUL, a lone surrogate): `usage replay --sanitize` records it. */
  'unstorable_text',
  /** A field is missing or of the wrong type or range. */
  'invalid_event',
  /** PostgreSQL refused the event's data (SQLSTATE class 22 or 23): it would fail on every delivery. */
  'data_error',
  /** It failed on `METERING_MAX_DELIVERIES` deliveries for a reason that is not an outage. */
  'max_deliveries',
] as const;
export type UsageDeadReason = (typeof USAGE_DEAD_REASONS)[number];

/**
 * What the `USAGE_DEAD` stream holds per event: the original message exactly as published, and why
 * metering could not record it. Every text in it is JSON-escaped on the wire; show it with `printable`.
 */
export interface UsageDeadLetter {
  reason: UsageDeadReason;
  /** The SQLSTATE, the field that failed validation, or the reason again. */
  code: string;
  /** The error, escaped (never the poison text raw). */
  message: string;
  /** Deliveries of the event before it was set aside. */
  deliveries: number;
  /** Its sequence number in the `USAGE` stream. */
  streamSequence: number;
  /** When it was set aside (ISO 8601). */
  deadLetteredAt: string;
  /** As the event says, when it is readable. */
  requestId?: string;
  accountId?: string;
  /** The original message body, base64. */
  payload: string;
}

/** A usage event field that fails validation, and whether `storableText` would make it valid. */
export interface UsageEventProblem {
  field: string;
  message: string;
  unstorableText: boolean;
}

/** PostgreSQL `integer`, the ledger's token columns. */
const MAX_INT4 = 2_147_483_647;
/** 9999-12-31T23:59:59Z, as far as the ledger's timestamps go. */
const MAX_TIMESTAMP = 253_402_300_799;
// eslint-disable-next-line no-control-regex -- NUL is exactly what PostgreSQL cannot store
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

const REQUIRED_TEXT = ['requestId', 'accountId', 'keyId', 'maskedKey', 'model', 'route', 'ip'] as const;
const OPTIONAL_TEXT = ['clientRequestId', 'provider', 'upstreamRoute', 'refusedBy'] as const;
const REQUIRED_COUNTS = ['inputTokens', 'outputTokens'] as const;
const OPTIONAL_COUNTS = ['cacheReadTokens', 'cacheWriteTokens', 'units', 'audioMs', 'characters'] as const;
const KEY_TYPES = Object.keys(KeyPrefixes);

/** The text with each NUL and lone surrogate replaced by U+FFFD, the replacement character. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_ALL, '\uFFFD');
}

/** Every string in a JSON value made storable (`storableText`), keys included. */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storableJson(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableJson(item)])) as T;
  }
  return value;
}

/**
 * Text for a log line or a terminal: JSON-escaped (control characters, NUL and lone surrogates as
 * `\u0000`-style escapes, quotes and backslashes escaped), at most `max` characters.
 */
export function printable(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? value : String(value);
  const escaped = JSON.stringify(text.length > max ? text.slice(0, max) : text).slice(1, -1);
  return text.length > max ? `${escaped}…` : escaped;
}

/**
 * The first reason a decoded usage event cannot be recorded as it is, or undefined when it can:
 * every field the ledger stores or prices with, of the right type and range, its text storable by
 * PostgreSQL. Unknown fields are left alone (a newer publisher may add some).
 */
export function usageEventProblem(value: unknown): UsageEventProblem | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid('event', 'must be a JSON object');
  const event = value as Record<string, unknown>;
  for (const field of [...REQUIRED_TEXT, ...OPTIONAL_TEXT]) {
    const text = event[field];
    if (text === undefined && (OPTIONAL_TEXT as readonly string[]).includes(field)) continue;
    if (typeof text !== 'string') return invalid(field, 'must be a string');
    if (!isStorableText(text)) return { field, message: `${field} holds a NUL or a lone surrogate, which PostgreSQL cannot store`, unstorableText: true };
  }
  for (const field of ['requestId', 'accountId'] as const) if (event[field] === '') return invalid(field, 'must not be empty');
  if (!KEY_TYPES.includes(event.keyType as string)) return invalid('keyType', `must be one of ${KEY_TYPES.join(', ')}`);
  if (!(USAGE_STATUSES as readonly unknown[]).includes(event.status)) return invalid('status', `must be one of ${USAGE_STATUSES.join(', ')}`);
  for (const field of [...REQUIRED_COUNTS, ...OPTIONAL_COUNTS]) {
    const count = event[field];
    if ((count === undefined || count === null) && (OPTIONAL_COUNTS as readonly string[]).includes(field)) continue;
    if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > MAX_INT4) return invalid(field, `must be an integer from 0 to ${MAX_INT4}`);
  }
  if (event.voids !== undefined && event.voids !== true) return invalid('voids', 'must be true when present');
  if (event.voids === true && event.status !== 'error') return invalid('status', "must be 'error' on a void");
  if ((event.refusedBy !== undefined) !== (event.status === 'refused')) return invalid('refusedBy', "must be present exactly when status is 'refused'");
  const timestamp = event.timestamp;
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP) {
    return invalid('timestamp', `must be Unix seconds from 0 to ${MAX_TIMESTAMP}`);
  }
  return undefined;
}

function invalid(field: string, message: string): UsageEventProblem {
  return { field, message: `${field} ${message}`, unstorableText: false };
}
