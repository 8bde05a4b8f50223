import { Injectable } from '@nestjs/common';
import { ApiKey, Prisma, PrismaService } from '@gateway/db';

export type CapCheckedInsert = { created: ApiKey } | { capReached: true };

@Injectable()
export class ProxyKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Inserts the key unless the account already holds `cap` proxy keys; the account row lock makes it exact. */
  insertWithinCap(accountId: string, cap: number, data: Prisma.ApiKeyUncheckedCreateInput): Promise<CapCheckedInsert> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
      const held = await tx.apiKey.count({ where: { accountId, type: 'proxy' } });
      if (held >= cap) return { capReached: true as const };
      return { created: await tx.apiKey.create({ data }) };
    });
  }

  list(accountId: string): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { accountId, type: 'proxy' }, orderBy: { createdAt: 'asc' } });
  }

  findOwned(accountId: string, keyHash: string): Promise<ApiKey | null> {
    return this.prisma.apiKey.findFirst({ where: { accountId, keyHash, type: 'proxy' } });
  }

  update(id: string, data: Prisma.ApiKeyUpdateInput): Promise<ApiKey> {
    return this.prisma.apiKey.update({ where: { id }, data });
  }

  /** Flips `is_active` in one statement, so concurrent toggles never lose one; returns the new state. */
  async toggle(accountId: string, keyHash: string): Promise<boolean | null> {
    const rows = await this.prisma.$queryRaw<{ is_active: boolean }[]>`
      UPDATE api_keys SET is_active = NOT is_active
      WHERE account_id = ${accountId} AND key_hash = ${keyHash} AND type = 'proxy'
      RETURNING is_active`;
    return rows[0]?.is_active ?? null;
  }

  async deleteOwned(accountId: string, keyHash: string): Promise<boolean> {
    const { count } = await this.prisma.apiKey.deleteMany({ where: { accountId, keyHash, type: 'proxy' } });
    return count > 0;
  }

  /** Deletes every proxy key of the account; returns the hashes that were deleted. */
  async deleteAll(accountId: string): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ key_hash: string }[]>`
      DELETE FROM api_keys WHERE account_id = ${accountId} AND type = 'proxy' RETURNING key_hash`;
    return rows.map((row) => row.key_hash);
  }
}
