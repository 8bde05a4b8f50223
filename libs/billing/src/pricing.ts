import type { ModelCatalog, PricingConfig } from '@gateway/catalog';
import type { UsageRecordedEvent } from '@gateway/contracts';
// The decimal class Prisma reads and writes (Prisma.Decimal is this one), without the generated client.
import { Decimal } from '@prisma/client/runtime/client';

/** Prices are credits per million tokens or characters (and per generated item). */
const TOKENS_PER_PRICE = 1_000_000;
const PER_MILLION = new Decimal(TOKENS_PER_PRICE);
const ZERO = new Decimal(0);
const MS_PER_SECOND = new Decimal(1000);

const decimal = (value: number | undefined): Decimal => new Decimal(String(value ?? 0));

export interface PricedUsage {
  credits: Decimal;
  known: boolean;
  /** The event says more cache tokens than input tokens: its uncached input was priced at zero. */
  inconsistent?: boolean;
}

/**
 * The credits a request costs, in exact decimal arithmetic: tokens at the model's price per million,
 * plus generated items (images, videos) at its price per item, plus audio milliseconds at its price
 * per second. `inputTokens` counts every input
 * token; of those, cache reads are priced at `pricing.cache_read`, cache writes at
 * `pricing.cache_write` (each the input price when the catalog sets none), the rest at `input`.
 * Failed and refused requests and DevPass (coding-plan) usage cost nothing; cancelled ones pay for what was
 * generated. A model no longer in the catalog is priced at zero and reported by the caller.
 */
export function priceUsage(catalog: ModelCatalog, event: UsageRecordedEvent): PricedUsage {
  if (event.status === 'error' || event.status === 'refused' || event.keyType === 'dev') return { credits: ZERO, known: true };
  const model = catalog.get(event.model);
  if (!model) return { credits: ZERO, known: false };
  const { input, output, per_item: perItem, cache_read: cacheRead = input, cache_write: cacheWrite = input } = model.config.pricing;
  const cacheReadTokens = decimal(event.cacheReadTokens);
  const cacheWriteTokens = decimal(event.cacheWriteTokens);
  const uncachedInput = decimal(event.inputTokens).minus(cacheReadTokens).minus(cacheWriteTokens);
  // Never a negative charge for input: an event that contradicts itself pays for its cache tokens only.
  const inconsistent = uncachedInput.isNegative();
  const tokens = (inconsistent ? ZERO : uncachedInput)
    .times(decimal(input))
    .plus(cacheReadTokens.times(decimal(cacheRead)))
    .plus(cacheWriteTokens.times(decimal(cacheWrite)))
    .plus(decimal(event.outputTokens).times(decimal(output)))
    .dividedBy(PER_MILLION);
  const items = decimal(event.units).times(decimal(perItem));
  const audio = decimal(event.audioMs).times(decimal(model.config.pricing.per_second)).dividedBy(MS_PER_SECOND);
  const characters = decimal(event.characters).times(decimal(model.config.pricing.characters)).dividedBy(PER_MILLION);
  return { credits: tokens.plus(items).plus(audio).plus(characters), known: true, ...(inconsistent ? { inconsistent } : {}) };
}

/** What a request may use at most, for its worst-case cost. */
export interface UsageBound {
  inputTokens?: number;
  outputTokens?: number;
  items?: number;
  /** Seconds of audio, at `pricing.per_second`. */
  audioSeconds?: number;
  /** Input characters of a speech request, at `pricing.characters` per million. */
  characters?: number;
  /** Every input token may be written to the provider's prompt cache (text generation), which can cost more than input. */
  cacheWritable?: boolean;
}

/**
 * The most a request can cost, in credits: a float, since it only bounds a reservation (rounded up
 * to nano-credits by `reservationNano`); the ledger's charge is `priceUsage`'s, exact.
 */
export function worstCaseCredits(pricing: PricingConfig, bound: UsageBound): number {
  const { input, output, per_item: perItem = 0, cache_write: cacheWrite = input } = pricing;
  const inputPrice = bound.cacheWritable ? Math.max(input, cacheWrite) : input;
  const tokens = ((bound.inputTokens ?? 0) * inputPrice + (bound.outputTokens ?? 0) * output) / TOKENS_PER_PRICE;
  const audio = (bound.audioSeconds ?? 0) * (pricing.per_second ?? 0);
  const characters = ((bound.characters ?? 0) * (pricing.characters ?? 0)) / TOKENS_PER_PRICE;
  return (bound.items ? tokens + bound.items * perItem : tokens) + audio + characters;
}
