import { Injectable } from '@nestjs/common';
import { Account, ApiKey, Prisma, PrismaService } from '@gateway/db';

export type ApiKeyWithAccount = ApiKey & { account: Account };

/** Master and DevPass keys, and the lookup every key type shares. */
@Injectable()
export class KeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByHash(keyHash: string): Promise<ApiKeyWithAccount | null> {
    return this.prisma.apiKey.findUnique({ where: { keyHash }, include: { account: true } });
  }

  /** One key of the account, by id; null once it is deleted. */
  findOwned(accountId: string, id: string): Promise<ApiKeyWithAccount | null> {
    return this.prisma.apiKey.findFirst({ where: { id, accountId }, include: { account: true } });
  }

  findByAccount(accountId: string, type: ApiKey['type']): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { accountId, type }, orderBy: { createdAt: 'asc' } });
  }

  insert(data: Prisma.ApiKeyUncheckedCreateInput): Promise<ApiKey> {
    return this.prisma.apiKey.create({ data });
  }

  /**
   * Swaps the account's master key for a new one atomically; returns the hashes of the keys it
   * replaced. The account row lock serialises concurrent regenerations.
   */
  replaceMasterKey(accountId: string, replacement: Prisma.ApiKeyUncheckedCreateInput): Promise<string[] | null> {
    return this.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
      if (locked.length === 0) return null;
      const old = await tx.apiKey.findMany({ where: { accountId, type: 'master' }, select: { keyHash: true } });
      await tx.apiKey.deleteMany({ where: { accountId, type: 'master' } });
      await tx.apiKey.create({ data: replacement });
      return old.map((key) => key.keyHash);
    });
  }

  deleteByIds(ids: string[]): Promise<Prisma.BatchPayload> {
    return this.prisma.apiKey.deleteMany({ where: { id: { in: ids } } });
  }

  /** One statement for a whole batch of `last_used` updates; never moves a timestamp back. */
  async touch(keyIds: string[], at: Date): Promise<void> {
    if (keyIds.length === 0) return;
    await this.prisma.$executeRaw`
      UPDATE api_keys SET last_used_at = ${at}
      WHERE id = ANY(${keyIds}::text[]) AND (last_used_at IS NULL OR last_used_at < ${at})`;
  }
}
