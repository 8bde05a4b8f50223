import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { defaultMigrationsDir, ensureDatabase, migrate } from './migrate';

const serverUrl = () => process.env.INTEGRATION_SERVER_URL as string;

function databaseUrl(name: string): string {
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('migration runner', () => {
  const name = `gateway_migrate_${process.pid}`;
  const url = databaseUrl(name);

  afterAll(async () => {
    await query(serverUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('creates the database, applies every migration once and records it as Prisma does', async () => {
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);

    const first = await migrate(url);
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.alreadyApplied).toEqual([]);

    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date; applied_steps_count: number }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((row) => row.migration_name)).toEqual(first.applied);
    for (const row of rows) {
      const sql = readFileSync(join(defaultMigrationsDir(), row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
    const tables = await query<{ table_name: string }>(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining(['accounts', 'api_keys']));

    const second = await migrate(url);
    expect(second).toEqual({ applied: [], alreadyApplied: first.applied });
  });

  it('refuses to continue when an applied migration was edited, and rolls back a failing one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    const otherName = `${name}_b`;
    const otherUrl = databaseUrl(otherName);
    await ensureDatabase(otherUrl);
    try {
      mkdirSync(join(dir, '20260101000000_first'));
      writeFileSync(join(dir, '20260101000000_first', 'migration.sql'), 'CREATE TABLE first_table (id INT);');
      expect((await migrate(otherUrl, dir)).applied).toEqual(['20260101000000_first']);

      writeFileSync(join(dir, '20260101000000_first', 'migration.sql'), 'CREATE TABLE first_table (id BIGINT);');
      await expect(migrate(otherUrl, dir)).rejects.toThrow(/modified after it was applied/);

      writeFileSync(join(dir, '20260101000000_first', 'migration.sql'), 'CREATE TABLE first_table (id INT);');
      mkdirSync(join(dir, '20260102000000_broken'));
      writeFileSync(join(dir, '20260102000000_broken', 'migration.sql'), 'CREATE TABLE half_done (id INT); SELECT nope();');
      await expect(migrate(otherUrl, dir)).rejects.toThrow(/20260102000000_broken failed/);
      const leftovers = await query(otherUrl, "SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'");
      expect(leftovers).toEqual([]);
      const recorded = await query<{ migration_name: string }>(otherUrl, 'SELECT migration_name FROM "_prisma_migrations"');
      expect(recorded.map((row) => row.migration_name)).toEqual(['20260101000000_first']);
    } finally {
      await query(serverUrl(), `DROP DATABASE IF EXISTS ${otherName} WITH (FORCE)`);
    }
  });
});
