/**
 * Stateful Responses: what a request refers to in the store (`previous_response_id`,
 * `item_reference` input items), the request the model sees once those are resolved, and the input
 * items stored with the reply. Pure: the router does the lookups.
 */
import { DomainError, ErrorCode } from '@gateway/errors';
import { fail, isObject, type JsonObject, optionalString, path, requireBody, requireObject, requireString } from '../common/validate';

/** A stored response as the router gets it back. */
export interface StoredConversation {
  response: Record<string, unknown>;
  /** Everything its model saw as input, each item with its id. */
  inputItems: Record<string, unknown>[];
}

export interface StoredReferences {
  previousResponseId?: string;
  /** `conversation`, a `conv_…` id or `{id}`: its items come before the request's input, and the turn is appended to it. */
  conversationId?: string;
  /** Ids of `item_reference` input items, in order, without repeats. */
  itemIds: string[];
}

export interface ResolvedRequest {
  /** The body with `input` replaced by the whole conversation: the earlier turns' items, then this request's. */
  body: Record<string, unknown>;
  /** The same items, each with an id: what is stored as this response's input items. */
  inputItems: Record<string, unknown>[];
  /** The request's own items among them (after the earlier turns'): what a conversation gets appended. */
  ownItems: Record<string, unknown>[];
}

/** Prefixes OpenAI gives items, by type; an input item the client sent without an id gets one. */
const ITEM_ID_PREFIXES: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/** The response id of a request: its request id's (unique) digits, so `x-request-id` and the response name each other. */
export function storedResponseId(requestId: string): string {
  return `resp_${requestId.replace(/^req_/, '')}`;
}

export function storedReferences(body: unknown): StoredReferences {
  const b = requireBody(body);
  const previousResponseId = optionalString(b, 'previous_response_id', '');
  if (previousResponseId === '') fail('previous_response_id', 'must not be empty');
  const conversationId = conversationOf(b.conversation);
  if (conversationId !== undefined && previousResponseId !== undefined) {
    fail('conversation', "cannot be used together with 'previous_response_id': give one of them");
  }
  const itemIds: string[] = [];
  if (Array.isArray(b.input)) {
    b.input.forEach((item, i) => {
      if (!isObject(item) || item.type !== 'item_reference') return;
      const id = requireString(item.id, path('input', i, 'id'), { nonEmpty: true });
      if (!itemIds.includes(id)) itemIds.push(id);
    });
  }
  return { previousResponseId, conversationId, itemIds };
}

/** `conversation`: an id, or an object with one; absent or null: none. */
function conversationOf(conversation: unknown): string | undefined {
  if (conversation === undefined || conversation === null) return undefined;
  const id = isObject(conversation)
    ? requireString(conversation.id, 'conversation.id', { nonEmpty: true })
    : requireString(conversation, 'conversation', { nonEmpty: true });
  if (id.length > 256) fail(isObject(conversation) ? 'conversation.id' : 'conversation', 'must be at most 256 characters');
  return id;
}

/**
 * Puts the previous response's input and output items (or the conversation's items) before this request's input, replaces each
 * `item_reference` with the stored item, and gives every item an id. An item whose id the
 * conversation already holds is dropped rather than sent twice (OpenAI refuses such a duplicate;
 * here the conversation simply keeps its first copy).
 */
export function resolveStoredReferences(
  body: unknown,
  previous: StoredConversation | undefined,
  items: Record<string, Record<string, unknown>>,
  requestId: string,
): ResolvedRequest {
  const b = requireBody(body);
  const input = ownInput(b.input);
  // Not an input the parser accepts: left as it is for the parser to name the problem.
  if (input === undefined) return { body: b, inputItems: [], ownItems: [] };
  const context = previous ? [...previous.inputItems, ...outputItems(previous.response)] : [];
  const known = new Set(context.map((item) => item.id).filter((id): id is string => typeof id === 'string'));
  const hex = requestId.replace(/^req_/, '');
  const own: Record<string, unknown>[] = [];
  input.forEach((raw, i) => {
    const item = raw.type === 'item_reference' ? referenced(raw, items, i) : withOwnShape(raw);
    if (typeof item.id !== 'string') {
      const prefix = ITEM_ID_PREFIXES[String(item.type ?? 'message')] ?? 'item';
      own.push({ id: `${prefix}_${hex}_in${i}`, ...item });
    } else if (!known.has(item.id)) {
      known.add(item.id);
      own.push(item);
    }
  });
  const inputItems = [...context, ...own];
  // The conversation is the router's to resolve and append to: the parser never sees it.
  const resolved: JsonObject = { ...b, input: inputItems };
  delete resolved.conversation;
  return { body: resolved, inputItems, ownItems: own };
}

function outputItems(response: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(response.output) ? (response.output as Record<string, unknown>[]).filter(isObject) : [];
}

/** A string input is one user message, stored as OpenAI lists it. */
function ownInput(input: unknown): JsonObject[] | undefined {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return undefined;
  return input.map((item, i) => requireObject(item, path('input', i)));
}

/** Messages get `type: 'message'` and content parts, as `input_items` lists them. */
function withOwnShape(item: JsonObject): JsonObject {
  if ((item.type ?? 'message') !== 'message') return item;
  const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
  return { ...item, type: 'message', content };
}

function referenced(reference: JsonObject, items: Record<string, Record<string, unknown>>, index: number): JsonObject {
  const id = requireString(reference.id, path('input', index, 'id'), { nonEmpty: true });
  const item = items[id];
  if (!item) throw new DomainError(ErrorCode.NotFound, `Item with id '${id}' not found.`, path('input', index, 'id'));
  return requireObject(item, path('input', index));
}
