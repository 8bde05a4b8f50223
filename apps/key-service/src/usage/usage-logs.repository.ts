import { PrismaService } from '@gateway/db';

/** The ledger's request logs, read by the admin CLI to tell whether a replayed usage event was recorded. */
export class UsageLogsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Of these request ids, those the ledger holds. */
  async recorded(requestIds: string[]): Promise<Set<string>> {
    if (requestIds.length === 0) return new Set();
    const rows = await this.prisma.usageLog.findMany({ where: { requestId: { in: requestIds } }, select: { requestId: true } });
    return new Set(rows.map((row) => row.requestId));
  }
}
