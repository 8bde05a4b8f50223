'use strict';
/**
 * npm start: infrastructure up, build, database migrated, bootstrap account seeded, every service
 * started; prints the base URL and the bootstrap keys. Ctrl-C stops every process it started.
 */
require('./lib/runtime').assertSupportedRuntime('npm start');
const { build } = require('./lib/build');
const { ensureInfra } = require('./lib/infra');
const { localEnv } = require('./lib/local-env');
const { greeting, prepareDatabase } = require('./lib/local-suite');
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
  const account = await prepareDatabase(env);

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

  console.log(`${greeting(env, port, account)}\nPress Ctrl-C to stop.\n`);
}

main().catch(async (error) => {
  console.error(`npm start failed: ${error.message}`);
  await suite?.stopAll().catch(() => undefined);
  stopInfra();
  process.exit(1);
});
