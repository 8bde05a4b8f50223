import { loadEnvOrExit, MigrationEnv, sessionDatabaseUrl } from '@gateway/platform';
import { ensureDatabase, migrate } from './migrate';

/** Entrypoint of the migration Job: `node dist/libs/db/src/migrate.main.js`. */
async function main(): Promise<void> {
  const databaseUrl = sessionDatabaseUrl(loadEnvOrExit(MigrationEnv, 'migrate'));
  if (await ensureDatabase(databaseUrl)) console.log('created database');
  const { applied, alreadyApplied } = await migrate(databaseUrl);
  console.log(`migrations: ${applied.length} applied, ${alreadyApplied.length} already applied`);
  for (const name of applied) console.log(`  applied ${name}`);
}

main().catch((error: Error) => {
  console.error(`migration failed: ${error.message}`);
  process.exit(1);
});
