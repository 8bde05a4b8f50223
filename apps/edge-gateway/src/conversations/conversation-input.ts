import { CONVERSATION_ITEMS_PER_CALL, CONVERSATION_METADATA_MAX_PAIRS } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';

/** Longer than any id the gateway gives; refused as unknown rather than sent on. */
export const MAX_ID_LENGTH = 256;

const MAX_KEY_LENGTH = 64;
const MAX_VALUE_LENGTH = 512;

function invalid(param: string, problem: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, `Invalid '${param}': ${problem}.`, param);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON object body (an absent body counts as `{}` where nothing is required). */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) throw new DomainError(ErrorCode.InvalidRequest, 'The request body must be a JSON object.');
  return body;
}

/** OpenAI's `metadata`: up to 16 string pairs, keys up to 64 characters, values up to 512. */
export function conversationMetadata(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalid('metadata', 'must be an object of string values');
  const entries = Object.entries(value);
  if (entries.length > CONVERSATION_METADATA_MAX_PAIRS) throw invalid('metadata', `must have at most ${CONVERSATION_METADATA_MAX_PAIRS} pairs`);
  for (const [key, pair] of entries) {
    if (key.length > MAX_KEY_LENGTH) throw invalid('metadata', `keys must be at most ${MAX_KEY_LENGTH} characters`);
    if (typeof pair !== 'string') throw invalid(`metadata.${key}`, 'must be a string');
    if (pair.length > MAX_VALUE_LENGTH) throw invalid(`metadata.${key}`, `must be at most ${MAX_VALUE_LENGTH} characters`);
  }
  return value as Record<string, string>;
}

/** `items`: an array of at most 20 objects (each item's own shape is checked where it is stored). */
export function conversationItems(value: unknown, required: boolean): Record<string, unknown>[] {
  if (value === undefined || value === null) {
    if (required) throw invalid('items', 'is required');
    return [];
  }
  if (!Array.isArray(value)) throw invalid('items', 'must be an array of items');
  if (required && value.length === 0) throw invalid('items', 'must hold at least one item');
  if (value.length > CONVERSATION_ITEMS_PER_CALL) throw invalid('items', `must hold at most ${CONVERSATION_ITEMS_PER_CALL} items`);
  value.forEach((item, i) => {
    if (!isObject(item)) throw invalid(`items[${i}]`, 'must be an object');
  });
  return value as Record<string, unknown>[];
}
