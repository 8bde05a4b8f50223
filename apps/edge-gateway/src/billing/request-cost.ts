import { worstCaseCredits } from '@gateway/billing';
import { ModelCatalog } from '@gateway/catalog';
import { requireBody, requireModel, reservedOutputCap } from '@gateway/client-formats';
import { DECISION_ROUTE, TEXT_ROUTES, type TextFormat } from '@gateway/contracts';
import { countTextsTokens, countTextTokens } from '@gateway/platform';
import { baseModelId } from '../auth/access-policy';

export interface CostEstimate {
  model: string;
  /** The usage route the request is logged under (`chat.completions`, `images.generations`, …). */
  route: string;
  /** Prompt tokens (counted over the whole body: an upper bound) plus the output cap. */
  tokens: number;
  /** Worst-case cost in credits (a float: it only bounds a reservation; the ledger is exact). */
  credits: number;
  /** Text generation: the output tokens reserved, which the router must not ask the upstream to exceed. */
  outputCap?: number;
}

const positiveInt = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined);

/**
 * The most a text-generation request can cost: its prompt tokens plus its output cap at the
 * model's prices. The cap is the one the router's parser applies (`reservedOutputCap`, shared with
 * the router, which is held to it). Null when the model is not in the catalog (the router answers
 * 404; nothing is charged). A body that is no object, or a missing or non-string `model`, is the
 * 400 the router would answer, given here: no later step reads the model as anything but a string.
 */
export function estimateTextCost(format: TextFormat, catalog: ModelCatalog, body: Record<string, unknown>): CostEstimate | null {
  const model = catalog.get(baseModelId(requireModel(requireBody(body))));
  if (!model) return null;
  const promptTokens = countTextTokens(JSON.stringify(body));
  const maxOutput = reservedOutputCap(format, body, model.config.max_output_tokens);
  return {
    model: model.config.id,
    route: TEXT_ROUTES[format],
    tokens: promptTokens + maxOutput,
    // The whole prompt may be written to the provider's cache, which can cost more than input.
    credits: worstCaseCredits(model.config.pricing, { inputTokens: promptTokens, outputTokens: maxOutput, cacheWritable: true }),
    outputCap: maxOutput,
  };
}

/** The `@Metered` estimator of one text-generation format. */
export const textCostEstimator =
  (format: TextFormat) =>
  (catalog: ModelCatalog, body: Record<string, unknown>): CostEstimate | null =>
    estimateTextCost(format, catalog, body);

/** Decisions bill input tokens only: the whole body's tokens (an upper bound) at the model's input price. */
export function estimateDecisionCost(catalog: ModelCatalog, body: Record<string, unknown>, model = 'jev'): CostEstimate | null {
  const entry = catalog.get(model);
  if (!entry) return null;
  const tokens = countTextTokens(JSON.stringify(body));
  return { model, route: DECISION_ROUTE, tokens, credits: worstCaseCredits(entry.config.pricing, { inputTokens: tokens }) };
}

/** The model a media request is for: the one it names, else the catalog's default for the route (its first model serving it). */
export function mediaModelId(catalog: ModelCatalog, route: string, body: Record<string, unknown>): string | undefined {
  return typeof body.model === 'string' ? body.model : catalog.firstServing(route)?.config.id;
}

/** Tokens of each input (string or array of strings), else of the whole body: an upper bound either way. */
function inputTokens(body: Record<string, unknown>): number {
  const input = body.input;
  if (typeof input === 'string') return countTextTokens(input);
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return countTextsTokens(input).reduce((sum, tokens) => sum + tokens, 0);
  return countTextTokens(JSON.stringify(body));
}

/** Embeddings and moderations bill their input tokens at the model's input price. */
export function estimateInputCost(catalog: ModelCatalog, route: string, body: Record<string, unknown>): CostEstimate | null {
  const id = mediaModelId(catalog, route, body);
  const model = id === undefined ? undefined : catalog.get(id);
  if (!model) return null;
  const tokens = inputTokens(body);
  return { model: model.config.id, route, tokens, credits: worstCaseCredits(model.config.pricing, { inputTokens: tokens }) };
}

/** A video is one item at the model's `pricing.per_item`; it counts no tokens (images: `estimateImageCost`). */
export function estimateItemCost(catalog: ModelCatalog, route: string, body: Record<string, unknown>): CostEstimate | null {
  const id = mediaModelId(catalog, route, body);
  const model = id === undefined ? undefined : catalog.get(id);
  if (!model) return null;
  return { model: model.config.id, route, tokens: 0, credits: worstCaseCredits(model.config.pricing, { items: 1 }) };
}

/**
 * Image generations and edits: `n` × `pricing.per_item`, and, for a model that prices tokens (a GPT
 * image model, billed from the tokens its upstream reports), the prompt's tokens at the input price
 * plus `n` × the catalog's `max_output_tokens` at the output price. The input images' own tokens
 * are not known before the upstream counts them: they are settled, not reserved.
 */
export function estimateImageCost(catalog: ModelCatalog, route: string, body: Record<string, unknown>): CostEstimate | null {
  const id = mediaModelId(catalog, route, body);
  const model = id === undefined ? undefined : catalog.get(id);
  if (!model) return null;
  const items = positiveInt(body.n) ?? 1;
  const { pricing, max_output_tokens: maxOutput } = model.config;
  if (pricing.input === 0 && pricing.output === 0) return { model: model.config.id, route, tokens: 0, credits: worstCaseCredits(pricing, { items }) };
  const tokens = typeof body.prompt === 'string' ? countTextTokens(body.prompt) : 0;
  return {
    model: model.config.id,
    route,
    tokens,
    credits: worstCaseCredits(pricing, { items, inputTokens: tokens, outputTokens: items * (maxOutput ?? 0) }),
  };
}

/**
 * Transcriptions and translations bill seconds of audio at the model's `pricing.per_second` (or
 * the tokens the upstream reports): the worst case is the file's duration, read from its container
 * header while it was uploaded (`file.duration_seconds`).
 */
export function estimateAudioCost(catalog: ModelCatalog, route: string, body: Record<string, unknown>): CostEstimate | null {
  const id = mediaModelId(catalog, route, body);
  const model = id === undefined ? undefined : catalog.get(id);
  if (!model) return null;
  const file = body.file as { duration_seconds?: unknown } | undefined;
  const seconds = typeof file?.duration_seconds === 'number' ? file.duration_seconds : 0;
  return { model: model.config.id, route, tokens: 0, credits: worstCaseCredits(model.config.pricing, { audioSeconds: seconds }) };
}
