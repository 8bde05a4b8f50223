'use strict';
/**
 * What `npm start` and `npm run dev` share once the infrastructure answers and dist/ is built: the
 * database created and migrated, the bootstrap account seeded, and the greeting with its keys.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { rememberBootstrap, root } = require('./local-env');

/** Resolves with the bootstrap account ({ account_id, master_key?, dev_key? }). */
async function prepareDatabase(env) {
  const { ensureDatabase, migrate } = require(path.join(root, 'dist/libs/db/src/migrate'));
  // Migrations hold a session-level lock: past a transaction-mode pooler, straight to the database.
  const databaseUrl = env.DATABASE_DIRECT_URL || env.DATABASE_URL;
  if (await ensureDatabase(databaseUrl)) console.log('created database');
  const { applied } = await migrate(databaseUrl);
  console.log(`migrations applied: ${applied.length ? applied.join(', ') : 'none pending'}`);

  const bootstrap = spawnSync(process.execPath, [path.join(root, 'dist/apps/key-service/src/cli/admin.cli.js'), 'bootstrap', '--json'], {
    env,
    cwd: root,
    encoding: 'utf8',
  });
  if (bootstrap.status !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr || bootstrap.stdout}`);
  return rememberBootstrap(JSON.parse(bootstrap.stdout.trim().split('\n').pop()));
}

function greeting(env, port, account) {
  return `
Model gateway is running.

  base URL        http://localhost:${port}/v1
  web console     http://localhost:${port}/console (sign in with one of the keys below)
  account         ${account.account_id} (${env.BOOTSTRAP_PLAN || 'pro'} plan)
  master key      ${account.master_key ?? '(not known here: set BOOTSTRAP_MASTER_KEY)'}
  DevPass key     ${account.dev_key ?? '(not known here: set BOOTSTRAP_DEV_KEY)'}
  (keys as issued to the bootstrap account; a key regenerated since is not shown)

Try: curl http://localhost:${port}/v1/auth/proxy -H "Authorization: Bearer ${account.master_key ?? '<API_KEY>'}"`;
}

module.exports = { prepareDatabase, greeting };
