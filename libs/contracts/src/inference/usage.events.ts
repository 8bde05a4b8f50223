import type { KeyType } from '../keys';
import type { CallerContext } from './text-generation.messages';

export const USAGE_STATUSES = ['success', 'cancelled', 'error'] as const;
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
  status: UsageStatus;
  ip: string;
  /** Unix seconds. */
  timestamp: number;
  /** The adapter that served it, for operators (not shown to clients). */
  provider?: string;
  /** The catalog label of the upstream route that served it (`<model>/<route name or index>`), for operators. */
  upstreamRoute?: string;
}

/** What a usage event says about the request beyond who made it. */
export type UsageFields = Omit<UsageRecordedEvent, 'requestId' | 'clientRequestId' | 'accountId' | 'keyId' | 'keyType' | 'maskedKey' | 'ip' | 'timestamp'>;

/** The request's usage event, for the caller the edge authenticated, stamped now. */
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
    timestamp: Math.floor(Date.now() / 1000),
  };
}
