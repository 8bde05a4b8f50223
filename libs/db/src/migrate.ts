import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * Applies the SQL migrations in Prisma's layout and records them in `_prisma_migrations` exactly as
 * `prisma migrate deploy` does, so either tool can take over from the other. Runs once per deploy
 * (the migration Job, or `npm start` locally), never from service replicas.
 */

/**
 * Prisma's own advisory lock id, so this runner and `prisma migrate deploy` exclude each other. The
 * lock is session-level, held from the first statement to the last: give the runner a direct
 * connection (DATABASE_DIRECT_URL), never a transaction-mode pooler, which would leave the lock on
 * some server connection it then lends to other clients.
 */
const PRISMA_ADVISORY_LOCK = 72707369;

const MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export function defaultMigrationsDir(): string {
  const candidates = [join(__dirname, '..', 'prisma', 'migrations'), join(process.cwd(), 'libs', 'db', 'prisma', 'migrations')];
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`migrations folder not found (looked in ${candidates.join(', ')})`);
  return found;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await admin.end();
  }
}

export async function migrate(databaseUrl: string, migrationsDir = defaultMigrationsDir()): Promise<MigrationResult> {
  const names = readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(migrationsDir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort();
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    await client.query(MIGRATIONS_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const recorded = new Map(rows.map((row) => [row.migration_name, row]));
    for (const name of names) {
      const sql = readFileSync(join(migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = recorded.get(name);
      if (previous?.finished_at) {
        if (previous.checksum !== checksum) {
          throw new Error(`migration ${name} was modified after it was applied (checksum mismatch)`);
        }
        result.alreadyApplied.push(name);
        continue;
      }
      if (previous) throw new Error(`migration ${name} failed earlier and needs manual resolution`);
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 1)`,
          [id, checksum, name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      result.applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]).catch(() => undefined);
    await client.end();
  }
  return result;
}
