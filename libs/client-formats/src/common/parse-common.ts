import type { CanonicalRequest, ReasoningOptions } from '@gateway/canonical';
import { fail, JsonObject, optionalBoolean, requireOneOf } from './validate';

export interface ParseOptions {
  /** The caller stripped `:reasoning-exclude` from the model id: reasoning must not be returned. */
  reasoningExcludeSuffix: boolean;
}

/**
 * What `ClientFormat.parse` returns: the canonical request plus the client-format facts that have
 * no place in it but are needed to render the reply.
 */
export interface ParsedClientRequest {
  request: CanonicalRequest;
  /** Chat `reasoning_content_compat`: also send reasoning as `reasoning_content`. Always false for other formats. */
  reasoningContentCompat: boolean;
  /** Responses `metadata`, echoed back on the response object (pass it to the render context). */
  metadata?: Record<string, unknown>;
  /** Responses `store` (default true, as OpenAI's API): the router stores the reply for later reference. */
  store?: boolean;
  /** Responses `previous_response_id`, echoed back (the router already put that response's items in the input). */
  previousResponseId?: string;
}

export type Effort = NonNullable<ReasoningOptions['effort']>;

/**
 * Reads a client effort level. Clients send more levels than the canonical three; the extra ones
 * are folded into the nearest canonical level, and `none` means "no reasoning".
 */
export function parseEffort(value: unknown, param: string): Effort | 'none' {
  const level = requireOneOf(value, ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const, param);
  if (level === 'minimal') return 'low';
  if (level === 'xhigh' || level === 'max') return 'high';
  return level;
}

/** The reasoning-related facts a client body gave, each undefined when the body did not say. */
export interface ReasoningSignals {
  enabled?: boolean;
  budgetTokens?: number;
  effort?: Effort;
  exclude?: boolean;
}

/**
 * Builds canonical reasoning options, or undefined when neither the body nor the model suffix said
 * anything about reasoning (so the adapter keeps the model's default behaviour).
 */
export function buildReasoning(signals: ReasoningSignals, options: ParseOptions): ReasoningOptions | undefined {
  const exclude = signals.exclude === true || options.reasoningExcludeSuffix;
  const saidAnything = signals.enabled !== undefined || signals.budgetTokens !== undefined || signals.effort !== undefined || exclude;
  if (!saidAnything) return undefined;
  const reasoning: ReasoningOptions = { enabled: signals.enabled ?? false, exclude };
  if (signals.budgetTokens !== undefined) reasoning.budgetTokens = signals.budgetTokens;
  if (signals.effort !== undefined) reasoning.effort = signals.effort;
  return reasoning;
}

/**
 * `web_search` (chat, responses): `false` is accepted; `true` is refused rather than ignored, since no
 * model behind the gateway searches the web.
 */
export function refuseWebSearch(body: JsonObject): void {
  if (optionalBoolean(body, 'web_search', '') === true) {
    fail('web_search', 'web search is not available on this gateway; send false or leave it out');
  }
}

/** Throws when a required field is absent (undefined or null). */
export function requirePresent(value: unknown, param: string): void {
  if (value === undefined || value === null) fail(param, 'is required');
}

/** Drops undefined values so canonical requests carry only what the client set. */
export function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}
