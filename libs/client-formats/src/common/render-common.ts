/**
 * Pieces shared by the non-streaming renderer and the stream encoders, so that a streamed reply
 * accumulates to exactly the object the non-streaming endpoint would have returned.
 */
import type { CanonicalRequest, StopReason, TokenLogprob, Usage } from '@gateway/canonical';
import type { ReasoningSeal } from './parse-common';

/** What rendering needs besides the canonical response or stream events. */
export interface RenderContext {
  /** The parsed request; the responses format echoes its settings back. */
  request: CanonicalRequest;
  /** Do not return reasoning (`:reasoning-exclude`, `reasoning.exclude`, `display: omitted`). */
  excludeReasoning: boolean;
  /** Chat only: also send reasoning as `reasoning_content` (DeepSeek-style clients). */
  reasoningContentCompat?: boolean;
  /** Responses only: the request's `metadata`, echoed back (`ParsedClientRequest.metadata`). */
  metadata?: Record<string, unknown>;
  /** Responses only: echoed as `store` and `previous_response_id` (`ParsedClientRequest.store`, `.previousResponseId`). */
  store?: boolean;
  previousResponseId?: string;
  /** Responses only: the conversation the turn is appended to, echoed as `conversation: {id}`. */
  conversationId?: string;
  /**
   * Responses only: the summary kind the client asked for (`ParsedClientRequest.reasoningSummary`).
   * Without one, reasoning items come back with `summary: []`, as OpenAI returns them.
   */
  reasoningSummary?: string;
  /**
   * Responses only: present when the client asked for `reasoning.encrypted_content`
   * (`ParsedClientRequest.encryptedReasoning`); each reasoning item then carries its reasoning sealed.
   */
  reasoningSeal?: Pick<ReasoningSeal, 'seal'>;
}

// ---- stop reasons ----------------------------------------------------------------------------

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';
export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence' | 'refusal';

/** Chat has no "stop sequence" reason: hitting one is an ordinary stop. */
export function chatFinishReason(reason: StopReason): ChatFinishReason {
  return reason === 'stop_sequence' ? 'stop' : reason;
}

const MESSAGES_STOP_REASONS: Record<StopReason, MessagesStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  stop_sequence: 'stop_sequence',
  content_filter: 'refusal',
};

export function messagesStopReason(reason: StopReason): MessagesStopReason {
  return MESSAGES_STOP_REASONS[reason];
}

/** Responses report a cut-short reply as `status: 'incomplete'` with the reason. */
export function responsesIncompleteReason(reason: StopReason): 'max_output_tokens' | 'content_filter' | undefined {
  if (reason === 'length') return 'max_output_tokens';
  if (reason === 'content_filter') return 'content_filter';
  return undefined;
}

// ---- ids --------------------------------------------------------------------------------------

/** Gives an upstream id the prefix clients of a format expect (`resp_`, `msg_`), keeping it traceable. */
export function prefixedId(prefix: string, id: string): string {
  return id.startsWith(prefix) ? id : `${prefix}${id}`;
}

/** Ids of the output items of one responses reply, derived from the response id so they are stable. */
export function responsesItemIds(responseId: string): {
  reasoning: (n: number) => string;
  message: (n: number) => string;
  functionCall: (n: number) => string;
} {
  const base = prefixedId('resp_', responseId).slice('resp_'.length);
  return {
    reasoning: (n) => `rs_${base}${n === 0 ? '' : `_${n}`}`,
    message: (n) => `msg_${base}${n === 0 ? '' : `_${n}`}`,
    functionCall: (n) => `fc_${base}_${n}`,
  };
}

// ---- usage ------------------------------------------------------------------------------------

export function chatUsage(usage: Usage): object {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

export function responsesUsage(usage: Usage): object {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/**
 * Anthropic usage, as Anthropic defines it: `input_tokens` excludes the cache reads and writes,
 * which have counters of their own (canonical `inputTokens` includes them, as OpenAI's `prompt_tokens`).
 */
export function messagesUsage(usage: Usage): {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
} {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}

// ---- logprobs ---------------------------------------------------------------------------------

/** UTF-8 bytes of a token, as OpenAI sends them next to each logprob. */
function tokenBytes(token: string): number[] {
  return Array.from(Buffer.from(token, 'utf8'));
}

/** Per-token logprobs with bytes: chat `logprobs.content` and responses `output_text.logprobs`. */
export function logprobsWithBytes(tokens: TokenLogprob[]): object[] {
  return tokens.map((t) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: tokenBytes(t.token),
    top_logprobs: (t.topLogprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: tokenBytes(top.token) })),
  }));
}

/** Logprobs of a responses `output_text.delta` event: the same data without `bytes`. */
export function responsesDeltaLogprobs(tokens: TokenLogprob[] | undefined): object[] {
  return (tokens ?? []).map((t) => ({
    token: t.token,
    logprob: t.logprob,
    top_logprobs: (t.topLogprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob })),
  }));
}

// ---- tool arguments ---------------------------------------------------------------------------

/**
 * Anthropic `tool_use.input` must be an object. Arguments that are not a JSON object (say, cut off
 * by `max_tokens`) become `{}` rather than failing the whole reply.
 */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Whether reasoning text should reach the client. */
export function visibleReasoning(reasoning: string | undefined, context: RenderContext): string | undefined {
  return context.excludeReasoning || !reasoning ? undefined : reasoning;
}
