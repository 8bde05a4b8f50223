import type { KeyType } from '../keys';
import type { CallerContext } from './text-generation.messages';

/** `refused`: the edge refused the request because a budget window of its key was spent (nothing was sent upstream). */
export const USAGE_STATUSES = ['success', 'cancelled', 'error', 'refused'] as const;
export type UsageStatus = (typeof USAGE_STATUSES)[number];

/**
 * One per request, published to JetStream (`usage.recorded`) with the request id as the message id,
 * so a retried publish is dropped by the stream and the ledger's unique request id does the rest.
 */
export interface UsageRecordedEvent {
  /** The gateway's request id: unique per request, whatever the client sent. */
  requestId: string;
  /** The client's own id for the request, when it sent one (`x-client-request-id` or `x-request-id`). */
  clientRequestId?: string;
  accountId: string;
  keyId: string;
  keyType: KeyType;
  /** Prefix and last 4 characters: what request logs show. */
  maskedKey: string;
  model: string;
  /** `chat.completions`, `responses`, `messages`, ... */
  route: string;
  /**
   * Every input token of the request, those read from or written to the provider's prompt cache
   * included (as OpenAI's `prompt_tokens`, unlike Anthropic's `input_tokens`).
   */
  inputTokens: number;
  outputTokens: number;
  /**
   * How many of `inputTokens` were read from the provider's prompt cache (priced at the model's
   * `pricing.cache_read`). Absent when the upstream reported no cache usage.
   */
  cacheReadTokens?: number;
  /**
   * How many of `inputTokens` were written to the provider's prompt cache (priced at the model's
   * `pricing.cache_write`). Absent when the upstream reported no cache usage.
   */
  cacheWriteTokens?: number;
  /** Items generated (images, videos), priced at the model's `pricing.per_item`; absent for text. */
  units?: number;
  /**
   * Audio transcribed or translated, in milliseconds, priced at the model's `pricing.per_second`
   * (when the upstream reported no tokens: its own seconds, else the duration the edge read from
   * the file). Absent for other routes.
   */
  audioMs?: number;
  /** Input characters of a speech request the upstream reported no tokens for, priced at the model's `pricing.characters`. */
  characters?: number;
  status: UsageStatus;
  ip: string;
  /** Unix seconds. */
  timestamp: number;
  /** The adapter that served it, for operators (not shown to clients). */
  provider?: string;
  /** The catalog label of the upstream route that served it (`<model>/<route name or index>`), for operators. */
  upstreamRoute?: string;
  /**
   * Sent by the edge, not the router (`usageVoid`): the edge answered the client with an error
   * status and no part of an answer (the answer lost with a NATS server, the router silent), so the
   * request is charged nothing, whatever the router reports for it before or after. Published
   * under its own message id (`<requestId>:void`): it never stands in for the router's event.
   */
  voids?: true;
  /**
   * A `refused` request (published by the edge): the budget window of the key that refused it,
   * `<period>@<timezone>` (a proxy key's allocation: its spend window, or `lifetime`, in UTC).
   */
  refusedBy?: string;
}

/** What a usage event says about the request beyond who made it. */
export type UsageFields = Omit<
  UsageRecordedEvent,
  'requestId' | 'clientRequestId' | 'accountId' | 'keyId' | 'keyType' | 'maskedKey' | 'ip' | 'timestamp' | 'refusedBy'
>;

/** The message id a usage event is published under: its request id, or for a void `<requestId>:void`. */
export function usageMessageId(event: Pick<UsageRecordedEvent, 'requestId' | 'voids'>): string {
  return event.voids ? `${event.requestId}:void` : event.requestId;
}

/**
 * The edge's void of a request it answered with an error status and no part of an answer: an
 * `error` event of no tokens, charged nothing, that also takes back any charge the router's event
 * made for the same request id (see `UsageRecordedEvent.voids`).
 */
export function usageVoid(caller: CallerContext, usage: Pick<UsageFields, 'model' | 'route'>): UsageRecordedEvent {
  return { ...usageEvent(caller, { ...usage, inputTokens: 0, outputTokens: 0, status: 'error' }), voids: true };
}

/**
 * The edge's record of a request it refused because a budget window of the key was spent: nothing
 * was sent upstream and nothing is charged; the request log names the window.
 */
export function usageRefusal(caller: CallerContext, usage: Pick<UsageFields, 'model' | 'route'>, refusedBy: string): UsageRecordedEvent {
  return { ...usageEvent(caller, { ...usage, inputTokens: 0, outputTokens: 0, status: 'refused' }), refusedBy };
}

/** The request's usage event, for the caller the edge authenticated, stamped when the edge admitted it (else now). */
export function usageEvent(caller: CallerContext, usage: UsageFields): UsageRecordedEvent {
  const { requestId, clientRequestId, accountId, keyId, keyType, maskedKey, ip } = caller;
  return {
    requestId,
    ...(clientRequestId ? { clientRequestId } : {}),
    accountId,
    keyId,
    keyType,
    maskedKey,
    ip,
    ...usage,
    timestamp: Math.floor((caller.admittedAt ?? Date.now()) / 1000),
  };
}
