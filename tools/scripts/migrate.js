'use strict';
// npm run migrate: create the database if missing and apply the SQL migrations.
const { build } = require('./lib/build');
const { localEnv } = require('./lib/local-env');
const { ensureInfra } = require('./lib/infra');

async function main() {
  const env = localEnv();
  await ensureInfra(env);
  build({ quiet: true });
  const { ensureDatabase, migrate } = require('../../dist/libs/db/src/migrate');
  // Migrations hold a session-level lock: past a transaction-mode pooler, straight to the database.
  const databaseUrl = env.DATABASE_DIRECT_URL || env.DATABASE_URL;
  if (await ensureDatabase(databaseUrl)) console.log('created database');
  const { applied, alreadyApplied } = await migrate(databaseUrl);
  console.log(`migrations: ${applied.length} applied, ${alreadyApplied.length} already applied`);
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
