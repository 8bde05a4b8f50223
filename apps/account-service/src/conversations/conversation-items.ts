import { randomBytes } from 'node:crypto';
import { DomainError, ErrorCode } from '@gateway/errors';

/** Prefixes OpenAI gives items, by type; an item added without an id gets one. */
const ITEM_ID_PREFIXES: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/** `conv_` and 48 hex digits, as OpenAI's. */
export function newConversationId(): string {
  return `conv_${randomBytes(24).toString('hex')}`;
}

export function newItemId(type: string): string {
  return `${ITEM_ID_PREFIXES[type] ?? 'item'}_${randomBytes(24).toString('hex')}`;
}

/**
 * Items as stored: each as given, with an id when it has none. A message (an item with a `role`
 * and no `type`, or `type: 'message'`) gets `type: 'message'` and its string content as one text
 * part, as OpenAI lists it. Anything but an object with a string `type` or `role` is a 400 naming it.
 */
export function storedItems(items: unknown[], param: string): Record<string, unknown>[] {
  return items.map((raw, i) => {
    const at = `${param}[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(`${at}`, 'must be an object');
    const item = raw as Record<string, unknown>;
    if (item.type !== undefined && typeof item.type !== 'string') throw invalid(`${at}.type`, 'must be a string');
    if (item.type === undefined && typeof item.role !== 'string') throw invalid(`${at}.type`, 'is required');
    if (item.id !== undefined && (typeof item.id !== 'string' || item.id === '' || item.id.length > 256))
      throw invalid(`${at}.id`, 'must be a non-empty string of at most 256 characters');
    const type = (item.type as string | undefined) ?? 'message';
    const shaped = type === 'message' ? asMessage(item, at) : item;
    return typeof shaped.id === 'string' ? shaped : { id: newItemId(type), ...shaped };
  });
}

function asMessage(item: Record<string, unknown>, at: string): Record<string, unknown> {
  if (typeof item.role !== 'string') throw invalid(`${at}.role`, 'is required');
  if (typeof item.content !== 'string' && !Array.isArray(item.content)) throw invalid(`${at}.content`, 'must be a string or an array of content parts');
  const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
  return { ...item, type: 'message', content };
}

function invalid(param: string, problem: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, `Invalid '${param}': ${problem}.`, param);
}
