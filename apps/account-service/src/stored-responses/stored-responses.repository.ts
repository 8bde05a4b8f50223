import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@gateway/db';

export interface StoredResponseRow {
  id: string;
  response: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
}

export interface Scope {
  accountId: string;
  keyId?: string;
}

/** Rows past `expiresAt` are never read, so the prune's timing changes disk use, not answers. */
function visible(scope: Scope, now: Date): Prisma.StoredResponseWhereInput {
  return { accountId: scope.accountId, ...(scope.keyId ? { keyId: scope.keyId } : {}), expiresAt: { gt: now } };
}

@Injectable()
export class StoredResponsesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async save(row: { id: string; accountId: string; keyId: string; response: object; inputItems: object[]; itemIds: string[]; expiresAt: Date }): Promise<void> {
    // The id is the request's own (unique), so a conflict is a redelivered save: keep the first.
    await this.prisma.storedResponse.createMany({
      data: [
        {
          id: row.id,
          accountId: row.accountId,
          keyId: row.keyId,
          response: row.response as Prisma.InputJsonObject,
          inputItems: row.inputItems as Prisma.InputJsonArray,
          itemIds: row.itemIds,
          expiresAt: row.expiresAt,
        },
      ],
      skipDuplicates: true,
    });
  }

  async find(scope: Scope, id: string, now = new Date()): Promise<StoredResponseRow | null> {
    const row = await this.prisma.storedResponse.findFirst({ where: { id, ...visible(scope, now) }, select: { id: true, response: true, inputItems: true } });
    return row ? toRow(row) : null;
  }

  /** The newest visible responses holding any of `itemIds` (the newest has the latest copy of each). */
  async withItems(scope: Scope, itemIds: string[], excludeIds: string[], take: number, now = new Date()): Promise<StoredResponseRow[]> {
    const rows = await this.prisma.storedResponse.findMany({
      where: { itemIds: { hasSome: itemIds }, id: { notIn: excludeIds }, ...visible(scope, now) },
      select: { id: true, response: true, inputItems: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take,
    });
    return rows.map(toRow);
  }

  async delete(scope: Scope, id: string, now = new Date()): Promise<boolean> {
    const { count } = await this.prisma.storedResponse.deleteMany({ where: { id, ...visible(scope, now) } });
    return count > 0;
  }

  /** Deletes expired rows in bounded batches, so one prune never holds a long transaction. */
  async pruneExpired(now = new Date(), batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.prisma.$executeRaw`
        DELETE FROM stored_responses WHERE id IN (
          SELECT id FROM stored_responses WHERE expires_at <= ${now} LIMIT ${batch})`;
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}

function toRow(row: { id: string; response: Prisma.JsonValue; inputItems: Prisma.JsonValue }): StoredResponseRow {
  return { id: row.id, response: row.response as Record<string, unknown>, inputItems: row.inputItems as Record<string, unknown>[] };
}
