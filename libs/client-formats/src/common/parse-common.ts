import type { CanonicalRequest, ReasoningOptions, ThinkingPart } from '@gateway/canonical';
import { EFFORT_LEVELS } from './common.schema';

export interface ParseOptions {
  /** The caller stripped `:reasoning-exclude` from the model id: reasoning must not be returned. */
  reasoningExcludeSuffix: boolean;
  /** The request's `anthropic-beta` header flags (messages; its body's `betas` join them). */
  betas?: string[];
  /** Responses only: opens the caller's `encrypted_content` reasoning items (absent: they add nothing). */
  reasoningSeal?: ReasoningSeal;
}

/**
 * The gateway's own `encrypted_content` for Responses reasoning items, bound to one account: what it
 * seals (the reasoning text and the upstream's signature, if any) is what restores the reasoning for
 * any upstream on a later turn. The cipher and its key live with the caller (the router).
 */
export interface ReasoningSeal {
  seal(reasoning: ThinkingPart): string;
  /** The sealed reasoning; throws a `DomainError` naming `param` when the content is not ours to open. */
  unseal(content: string, param: string): ThinkingPart;
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
  /** Responses `reasoning.summary` when the client asked for a summary: the kind as sent (`true` is `auto`). */
  reasoningSummary?: string;
  /** Responses `include: ['reasoning.encrypted_content']`: reasoning items carry the sealed reasoning. */
  encryptedReasoning?: boolean;
}

export type Effort = NonNullable<ReasoningOptions['effort']>;

/**
 * A client effort level. Clients send more levels than the canonical three; the extra ones the
 * gateway knows are folded into the nearest canonical level, and `none` means "no reasoning". A
 * level it does not know (a newer client's) has no canonical meaning: undefined, so the upstream's
 * default effort applies.
 */
export function foldEffort(level: string): Effort | 'none' | undefined {
  if (level === 'minimal') return 'low';
  if (level === 'xhigh' || level === 'max') return 'high';
  return (EFFORT_LEVELS as readonly string[]).includes(level) ? (level as Effort | 'none') : undefined;
}

/** What an effort level says about reasoning: `none` turns it off, any other level (known or not) on, at that effort when known. */
export function effortSignals(level: string | null | undefined): ReasoningSignals {
  if (level === undefined || level === null) return {};
  const effort = foldEffort(level);
  if (effort === 'none') return { enabled: false };
  return effort === undefined ? { enabled: true } : { enabled: true, effort };
}

/** The reasoning-related facts a client body gave, each undefined when the body did not say. */
export interface ReasoningSignals {
  enabled?: boolean;
  budgetTokens?: number;
  effort?: Effort;
  exclude?: boolean;
  display?: string;
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
  if (signals.display !== undefined) reasoning.display = signals.display;
  return reasoning;
}

/**
 * Whether the client is shown no reasoning at all. `exclude` hides it from every upstream.
 * `display: 'updates'` shows only the progress notes Anthropic's models write between tool calls,
 * the reasoning itself staying hidden: an upstream that applies the display mode returns just those
 * notes; any other upstream writes no such notes, so from it nothing is shown, as with `omitted`.
 */
export function hidesReasoning(reasoning: ReasoningOptions | undefined, upstreamAppliesDisplay: boolean): boolean {
  if (!reasoning) return false;
  return reasoning.exclude || (reasoning.display === 'updates' && !upstreamAppliesDisplay);
}

/** Drops undefined values so canonical requests carry only what the client set. */
export function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}
