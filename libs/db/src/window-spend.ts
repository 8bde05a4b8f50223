import { Prisma } from './generated/prisma/client';
import type { PrismaService } from './prisma.service';

/** Where to read a budget window's spend from: charges at or after `from` (ms), summed per `granularityMs` (0: one sum at `from`). */
export interface WindowSpan {
  from: number;
  granularityMs: number;
}

/** A bucket of a window's spend: its start (ms) and the credits charged in it (or tokens counted, for a DevPass key). */
export interface SpendBucket {
  at: number;
  credits: Prisma.Decimal;
}

/**
 * A proxy key's spend in each of its budget windows, from the ledger (usage_logs, by its
 * key_id/created_at index), in buckets as budget-windows.ts cuts them: one query per window.
 */
export function windowSpend(prisma: PrismaService, keyId: string, spans: WindowSpan[], unit: 'credits' | 'tokens' = 'credits'): Promise<SpendBucket[][]> {
  // Tokens: a DevPass key's input plus output tokens, of every request that was not an error.
  const amount = unit === 'tokens' ? Prisma.sql`coalesce(input_tokens, 0) + coalesce(output_tokens, 0)` : Prisma.sql`credits`;
  const counted = unit === 'tokens' ? Prisma.sql`status <> 'error'` : Prisma.sql`credits <> 0`;
  return Promise.all(
    spans.map(async ({ from, granularityMs }) => {
      const rows = await prisma.$queryRaw<{ at: bigint; credits: Prisma.Decimal }[]>`
        SELECT CASE WHEN ${granularityMs}::bigint = 0 THEN ${from}::bigint
                    ELSE (floor(extract(epoch FROM created_at) * 1000 / ${granularityMs}::bigint) * ${granularityMs}::bigint)::bigint END AS at,
               sum(${amount}) AS credits
        FROM usage_logs
        WHERE key_id = ${keyId} AND created_at >= to_timestamp(${from}::bigint / 1000.0) AND ${counted}
        GROUP BY 1 ORDER BY 1`;
      return rows.map((row) => ({ at: Number(row.at), credits: new Prisma.Decimal(row.credits) }));
    }),
  );
}
