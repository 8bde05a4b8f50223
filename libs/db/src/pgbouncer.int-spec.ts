import { randomUUID } from 'node:crypto';
import { PrismaService } from './prisma.service';

// Tooling shared with the end-to-end tests: plain JS outside any project, so the boundary rule does not apply.
// eslint-disable-next-line @nx/enforce-module-boundaries
const { startPgBouncer } = require('../../../tools/scripts/lib/pgbouncer');

/**
 * The services' Prisma client behind PgBouncer in transaction mode with a single server connection:
 * two clients, each with a pool of its own, take turns on it between every statement. A statement
 * prepared by name, or anything left on the session, would meet the other client there.
 */
describe('PrismaService behind PgBouncer (transaction mode, one server connection)', () => {
  let bouncer: { url: string; stop(): Promise<void> };
  let clients: PrismaService[] = [];

  beforeAll(async () => {
    bouncer = await startPgBouncer(process.env.INTEGRATION_DATABASE_URL as string, { poolSize: 1 });
    clients = [new PrismaService(bouncer.url), new PrismaService(bouncer.url)];
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.$disconnect()));
    await bouncer?.stop();
  });

  it('runs parameterised queries, model queries and interactive transactions of both clients interleaved', async () => {
    const ids = [randomUUID(), randomUUID()];
    await Promise.all(ids.map((id, i) => clients[i].account.create({ data: { id, plan: 'pro', credits: '1.5' } })));

    const work = Array.from({ length: 40 }, async (_, n) => {
      const client = clients[n % 2];
      const id = ids[n % 2];
      if (n % 4 < 2) {
        return client.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${id} FOR UPDATE`;
          await tx.account.update({ where: { id }, data: { credits: { increment: '0.25' } } });
        });
      }
      const rows = await client.$queryRaw<{ n: number }[]>`SELECT ${n}::int AS n`;
      expect(rows).toEqual([{ n }]);
      expect(await client.account.findUnique({ where: { id }, select: { plan: true } })).toEqual({ plan: 'pro' });
    });
    await Promise.all(work);

    const accounts = await clients[0].account.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });
    // Ten transactions per client, a quarter credit each: exact decimals.
    expect(accounts.map((account) => account.credits.toString())).toEqual(['4', '4']);
    expect(await Promise.all(clients.map((client) => client.isReachable()))).toEqual([true, true]);
  });
});
