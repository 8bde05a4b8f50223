import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@gateway/db';
import { SpendWindow, spendWindowId, UsageRecordedEvent, windowStart } from '@gateway/contracts';

export interface LedgerWrite {
  state: 'recorded' | 'duplicate';
  /** What the request was charged: now, or (a duplicate) when it was first recorded. */
  credits: Prisma.Decimal;
  /** For a proxy key: the spend window the charge was counted in (its start in ms, or `life`). */
  windowId?: string;
}

export interface AccountBalance {
  credits: Prisma.Decimal;
}

/** The ledger: request logs, account credits, proxy-key spend and daily counters, written together. */
@Injectable()
export class LedgerRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Records one request and its charge in one transaction. The request id is the log's primary
   * key: a second delivery of the same event inserts nothing and charges nothing.
   */
  record(event: UsageRecordedEvent, credits: Prisma.Decimal): Promise<LedgerWrite> {
    const at = new Date(event.timestamp * 1000);
    return this.prisma.$transaction(async (tx) => {
      const inserted = await tx.$executeRaw`
        INSERT INTO usage_logs (request_id, account_id, key_id, key_type, masked_key, model, route, status,
                                input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, credits, ip, created_at)
        VALUES (${event.requestId}, ${event.accountId}, ${event.keyId}, ${event.keyType}::"KeyType", ${event.maskedKey},
                ${event.model}, ${event.route}, ${event.status}::"UsageStatus", ${event.inputTokens}, ${event.outputTokens},
                ${event.cacheReadTokens ?? null}::integer, ${event.cacheWriteTokens ?? null}::integer, ${credits}, ${event.ip}, ${at})
        ON CONFLICT (request_id) DO NOTHING`;
      if (inserted === 0) return this.duplicate(tx, event, at);
      let windowId: string | undefined;
      if (!credits.isZero()) {
        await tx.$executeRaw`UPDATE accounts SET credits = credits - ${credits} WHERE id = ${event.accountId}`;
        if (event.keyType === 'proxy') windowId = await this.addProxySpend(tx, event.keyId, credits, at);
      }
      await tx.$executeRaw`
        INSERT INTO daily_usage (account_id, day, route, requests, input_tokens, output_tokens)
        VALUES (${event.accountId}, ${at}::date, ${event.route}, 1, ${event.inputTokens}, ${event.outputTokens})
        ON CONFLICT (account_id, day, route) DO UPDATE SET
          requests = daily_usage.requests + 1,
          input_tokens = daily_usage.input_tokens + EXCLUDED.input_tokens,
          output_tokens = daily_usage.output_tokens + EXCLUDED.output_tokens`;
      return { state: 'recorded', credits, windowId };
    });
  }

  /** A request recorded before: what it was charged, and in which of the key's windows. */
  private async duplicate(tx: Prisma.TransactionClient, event: UsageRecordedEvent, at: Date): Promise<LedgerWrite> {
    const [row] = await tx.$queryRaw<{ credits: Prisma.Decimal }[]>`SELECT credits FROM usage_logs WHERE request_id = ${event.requestId}`;
    const credits = new Prisma.Decimal(row?.credits ?? 0);
    if (event.keyType !== 'proxy' || credits.isZero()) return { state: 'duplicate', credits };
    const [key] = await tx.$queryRaw<{ spend_window: SpendWindow | null }[]>`SELECT spend_window FROM api_keys WHERE id = ${event.keyId}`;
    if (!key) return { state: 'duplicate', credits };
    return { state: 'duplicate', credits, windowId: spendWindowId(key.spend_window, at) };
  }

  /**
   * Adds to the key's `used_amount` in the spend window the request falls in: a request in a newer
   * window than the stored one starts the count afresh; one from an older window (a late event)
   * no longer counts against the current allocation.
   */
  private async addProxySpend(tx: Prisma.TransactionClient, keyId: string, credits: Prisma.Decimal, at: Date): Promise<string | undefined> {
    const [key] = await tx.$queryRaw<{ spend_window: SpendWindow | null; window_started_at: Date | null }[]>`
      SELECT spend_window, window_started_at FROM api_keys WHERE id = ${keyId} FOR UPDATE`;
    if (!key) return undefined;
    const start = windowStart(key.spend_window, at);
    if (start === null) {
      await tx.$executeRaw`UPDATE api_keys SET used_amount = used_amount + ${credits}, window_started_at = NULL WHERE id = ${keyId}`;
    } else if (key.window_started_at === null || key.window_started_at < start) {
      await tx.$executeRaw`UPDATE api_keys SET used_amount = ${credits}, window_started_at = ${start} WHERE id = ${keyId}`;
    } else if (key.window_started_at.getTime() === start.getTime()) {
      await tx.$executeRaw`UPDATE api_keys SET used_amount = used_amount + ${credits} WHERE id = ${keyId}`;
    }
    return spendWindowId(key.spend_window, at);
  }
}
