import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent } from '@gateway/contracts';
import { Prisma } from '@gateway/db';

const PER_MILLION = new Prisma.Decimal(1_000_000);

/**
 * The credits a request costs, in exact decimal arithmetic: tokens at the model's price per million,
 * plus generated items (images, videos) at its price per item.
 * Failed requests and DevPass (coding-plan) usage cost nothing; cancelled ones pay for what was
 * generated. A model no longer in the catalog is priced at zero and reported by the caller.
 */
export function priceUsage(catalog: ModelCatalog, event: UsageRecordedEvent): { credits: Prisma.Decimal; known: boolean } {
  if (event.status === 'error' || event.keyType === 'dev') return { credits: new Prisma.Decimal(0), known: true };
  const model = catalog.get(event.model);
  if (!model) return { credits: new Prisma.Decimal(0), known: false };
  const { input, output, per_item: perItem } = model.config.pricing;
  const tokens = new Prisma.Decimal(event.inputTokens)
    .times(new Prisma.Decimal(String(input)))
    .plus(new Prisma.Decimal(event.outputTokens).times(new Prisma.Decimal(String(output))))
    .dividedBy(PER_MILLION);
  const items = new Prisma.Decimal(event.units ?? 0).times(new Prisma.Decimal(String(perItem ?? 0)));
  return { credits: tokens.plus(items), known: true };
}
