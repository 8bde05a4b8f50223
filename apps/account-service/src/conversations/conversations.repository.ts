import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@gateway/db';
import type { Scope } from '../stored-responses/stored-responses.repository';

export interface ConversationRow {
  id: string;
  metadata: Record<string, string>;
  createdAt: Date;
}

/** Rows past `expiresAt` are never read, so the prune's timing changes disk use, not answers. */
function visible(scope: Scope, now: Date): Prisma.ConversationWhereInput {
  return { accountId: scope.accountId, ...(scope.keyId ? { keyId: scope.keyId } : {}), expiresAt: { gt: now } };
}

const CONVERSATION = { id: true, metadata: true, createdAt: true } as const;

@Injectable()
export class ConversationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(row: {
    id: string;
    accountId: string;
    keyId: string;
    metadata: Record<string, string>;
    items: Record<string, unknown>[];
    expiresAt: Date;
  }): Promise<ConversationRow> {
    const created = await this.prisma.conversation.create({
      data: {
        id: row.id,
        accountId: row.accountId,
        keyId: row.keyId,
        metadata: row.metadata,
        expiresAt: row.expiresAt,
        items: { createMany: { data: row.items.map((item) => ({ itemId: String(item.id), item: item as Prisma.InputJsonObject })), skipDuplicates: true } },
      },
      select: CONVERSATION,
    });
    return toRow(created);
  }

  async find(scope: Scope, id: string, now = new Date()): Promise<ConversationRow | null> {
    const row = await this.prisma.conversation.findFirst({ where: { id, ...visible(scope, now) }, select: CONVERSATION });
    return row ? toRow(row) : null;
  }

  /** Replaces the metadata (or, without it, only pushes the expiry on); null when not visible. */
  async touch(scope: Scope, id: string, expiresAt: Date, metadata?: Record<string, string>, now = new Date()): Promise<ConversationRow | null> {
    const { count } = await this.prisma.conversation.updateMany({
      where: { id, ...visible(scope, now) },
      data: { expiresAt, ...(metadata ? { metadata } : {}) },
    });
    return count > 0 ? this.find(scope, id, now) : null;
  }

  async delete(scope: Scope, id: string, now = new Date()): Promise<boolean> {
    const { count } = await this.prisma.conversation.deleteMany({ where: { id, ...visible(scope, now) } });
    return count > 0;
  }

  /** Adds items at the end, in order; an id the conversation already holds keeps its first copy. */
  async append(conversationId: string, items: Record<string, unknown>[]): Promise<void> {
    await this.prisma.conversationItem.createMany({
      data: items.map((item) => ({ conversationId, itemId: String(item.id), item: item as Prisma.InputJsonObject })),
      skipDuplicates: true,
    });
  }

  /** The position of an item in its conversation, for paging. */
  async seqOf(conversationId: string, itemId: string): Promise<bigint | null> {
    const row = await this.prisma.conversationItem.findUnique({ where: { conversationId_itemId: { conversationId, itemId } }, select: { seq: true } });
    return row?.seq ?? null;
  }

  /** Items after `afterSeq` in `order`; `take` undefined: all of them. */
  async items(conversationId: string, order: 'asc' | 'desc', afterSeq: bigint | undefined, take: number | undefined): Promise<Record<string, unknown>[]> {
    const rows = await this.prisma.conversationItem.findMany({
      where: { conversationId, ...(afterSeq !== undefined ? { seq: order === 'asc' ? { gt: afterSeq } : { lt: afterSeq } } : {}) },
      orderBy: { seq: order },
      select: { item: true },
      ...(take !== undefined ? { take } : {}),
    });
    return rows.map((row) => row.item as Record<string, unknown>);
  }

  async item(conversationId: string, itemId: string): Promise<Record<string, unknown> | null> {
    const row = await this.prisma.conversationItem.findUnique({ where: { conversationId_itemId: { conversationId, itemId } }, select: { item: true } });
    return row ? (row.item as Record<string, unknown>) : null;
  }

  async deleteItem(conversationId: string, itemId: string): Promise<boolean> {
    const { count } = await this.prisma.conversationItem.deleteMany({ where: { conversationId, itemId } });
    return count > 0;
  }

  /** Deletes expired conversations (their items cascade) in bounded batches. */
  async pruneExpired(now = new Date(), batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.prisma.$executeRaw`
        DELETE FROM conversations WHERE id IN (
          SELECT id FROM conversations WHERE expires_at <= ${now} LIMIT ${batch})`;
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}

function toRow(row: { id: string; metadata: Prisma.JsonValue; createdAt: Date }): ConversationRow {
  return { id: row.id, metadata: (row.metadata ?? {}) as Record<string, string>, createdAt: row.createdAt };
}
