'use strict';
/**
 * npm start: infrastructure up, build, database migrated, bootstrap account seeded, every service
 * started; prints the base URL and the bootstrap keys. Ctrl-C stops every process it started.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { build } = require('./lib/build');
const { ensureInfra } = require('./lib/infra');
const { localEnv, rememberBootstrap, root } = require('./lib/local-env');
const { APPS, Suite } = require('./lib/suite');

/** Stops what ensureInfra started (nothing when the servers were already running). */
let stopInfra = () => undefined;
/** The services started so far, stopped again when a later one fails to start. */
let suite;

async function main() {
  const env = localEnv();
  const port = Number(env.PORT || 8080);
  console.log('checking PostgreSQL, Redis and NATS...');
  stopInfra = await ensureInfra(env);
  console.log('building...');
  build({ quiet: true });

  const { ensureDatabase, migrate } = require(path.join(root, 'dist/libs/db/src/migrate'));
  if (await ensureDatabase(env.DATABASE_URL)) console.log('created database');
  const { applied } = await migrate(env.DATABASE_URL);
  console.log(`migrations applied: ${applied.length ? applied.join(', ') : 'none pending'}`);

  const bootstrap = spawnSync(
    process.execPath,
    [path.join(root, 'dist/apps/key-service/src/cli/admin.cli.js'), 'bootstrap', '--json'],
    { env, cwd: root, encoding: 'utf8' },
  );
  if (bootstrap.status !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr || bootstrap.stdout}`);
  const account = rememberBootstrap(JSON.parse(bootstrap.stdout.trim().split('\n').pop()));

  suite = new Suite({ env });
  let shuttingDown = false;
  const shutdown = async (code) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log('\nstopping...');
    await suite.stopAll();
    stopInfra();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  suite.onUnexpectedExit = (id, code, signal) => {
    console.error(`${id} exited unexpectedly (${signal ?? `code ${code}`}); stopping the suite`);
    void shutdown(1);
  };

  for (const app of APPS) {
    await suite.start(app, app === 'edge-gateway' ? { port } : {});
  }

  console.log(`
Model gateway is running.

  base URL        http://localhost:${port}/v1
  account         ${account.account_id} (${env.BOOTSTRAP_PLAN || 'pro'} plan)
  master key      ${account.master_key ?? '(not known here: set BOOTSTRAP_MASTER_KEY)'}
  DevPass key     ${account.dev_key ?? '(not known here: set BOOTSTRAP_DEV_KEY)'}
  (keys as issued to the bootstrap account; a key regenerated since is not shown)

Try: curl http://localhost:${port}/v1/auth/proxy -H "Authorization: Bearer ${account.master_key ?? '<API_KEY>'}"
Press Ctrl-C to stop.
`);
}

main().catch(async (error) => {
  console.error(`npm start failed: ${error.message}`);
  await suite?.stopAll().catch(() => undefined);
  stopInfra();
  process.exit(1);
});
