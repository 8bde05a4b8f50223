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

/** A model's prices as decimals, made once per catalog entry (a catalog reload makes new entries). */
interface DecimalPrices {
  input: Decimal;
  output: Decimal;
  cacheRead: Decimal;
  cacheWrite: Decimal;
  perItem: Decimal;
  perSecond: Decimal;
  characters: Decimal;
}

const decimalPrices = new WeakMap<PricingConfig, DecimalPrices>();

function pricesOf(pricing: PricingConfig): DecimalPrices {
  let prices = decimalPrices.get(pricing);
  if (!prices) {
    const { input, output, per_item: perItem, cache_read: cacheRead = input, cache_write: cacheWrite = input } = pricing;
    prices = {
      input: decimal(input),
      output: decimal(output),
      cacheRead: decimal(cacheRead),
      cacheWrite: decimal(cacheWrite),
      perItem: decimal(perItem),
      perSecond: decimal(pricing.per_second),
      characters: decimal(pricing.characters),
    };
    decimalPrices.set(pricing, prices);
  }
  return prices;
}

/** `count` × `price` added to `sum`; a count of zero (or none) adds nothing, as the exact sum would. */
function plusTimes(sum: Decimal, count: number | undefined, price: Decimal): Decimal {
  return count ? sum.plus(decimal(count).times(price)) : sum;
}

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
 * The metering service prices every event with it: the model's prices are decimals made once, and a
 * quantity the event does not have (zero) adds no term, which changes no sum.
 */
export function priceUsage(catalog: ModelCatalog, event: UsageRecordedEvent): PricedUsage {
  if (event.status === 'error' || event.status === 'refused' || event.keyType === 'dev') return { credits: ZERO, known: true };
  const model = catalog.get(event.model);
  if (!model) return { credits: ZERO, known: false };
  const prices = pricesOf(model.config.pricing);
  const cacheRead = event.cacheReadTokens ?? 0;
  const cacheWrite = event.cacheWriteTokens ?? 0;
  const uncachedInput = (event.inputTokens ?? 0) - cacheRead - cacheWrite;
  // Never a negative charge for input: an event that contradicts itself pays for its cache tokens only.
  const inconsistent = uncachedInput < 0;
  let tokens = plusTimes(ZERO, inconsistent ? 0 : uncachedInput, prices.input);
  tokens = plusTimes(tokens, cacheRead, prices.cacheRead);
  tokens = plusTimes(tokens, cacheWrite, prices.cacheWrite);
  tokens = plusTimes(tokens, event.outputTokens, prices.output);
  let credits = tokens.isZero() ? ZERO : tokens.dividedBy(PER_MILLION);
  credits = plusTimes(credits, event.units, prices.perItem);
  if (event.audioMs) credits = credits.plus(decimal(event.audioMs).times(prices.perSecond).dividedBy(MS_PER_SECOND));
  if (event.characters) credits = credits.plus(decimal(event.characters).times(prices.characters).dividedBy(PER_MILLION));
  return { credits, known: true, ...(inconsistent ? { inconsistent } : {}) };
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
