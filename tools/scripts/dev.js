'use strict';
/**
 * npm run dev: `npm start` (same environment, infrastructure, build, migrations and bootstrap), then
 * watches apps/<service>/src, libs/<lib>/src and config/. On a change it rebuilds dist/ and restarts
 * the services the change reaches: a service's own sources restart that service; a lib or config/
 * restarts them all (every service reads the libs, and the catalog is read by several), in start
 * order, the edge last. The web console (apps/console) is built by Vite in watch mode into
 * dist/apps/console, which the edge serves as it is on disk: a save there needs no restart, only a
 * reload of the page. A build or a startup that fails leaves the watchers running: fix the file and
 * save again. Ctrl-C or SIGTERM stops every process it started.
 */
require('./lib/runtime').assertSupportedRuntime('npm run dev');
const chokidar = require('chokidar');
const fs = require('node:fs');
const path = require('node:path');
const { build, CONSOLE_DIR, watchConsole } = require('./lib/build');
const { ensureInfra } = require('./lib/infra');
const { localEnv, root } = require('./lib/local-env');
const { greeting, prepareDatabase } = require('./lib/local-suite');
const { APPS, Suite } = require('./lib/suite');

/**
 * Editors save a file in several writes and a branch switch touches many files: changes are
 * gathered until none has come for this long, then handled as one.
 */
const SETTLE_MS = 300;

const log = (message) => console.log(`[dev] ${message}`);

let shuttingDown = false;

let stopInfra = () => undefined;
let suite;
let watcher;
let consoleWatcher;
/** Whether the edge found the console built when it started (it serves the assets only then). */
let edgeHasConsole = true;
/** Rebuilds and restarts, one at a time: changes made during one are handled right after it. */
let cycle = Promise.resolve();

/** The directories whose changes need a rebuild or a restart. */
function watchedDirs() {
  const libs = fs
    .readdirSync(path.join(root, 'libs'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(root, 'libs', entry.name, 'src'));
  return [...APPS.map((app) => path.join(root, 'apps', app, 'src')), ...libs, path.join(root, 'config')].filter((dir) => fs.existsSync(dir));
}

/** Tests are not built (.swcrc excludes them): a change to one needs nothing here. */
const isTest = (file) => /\.(int-)?spec\.ts$/.test(file);

/** The services to rebuild and restart for these changed files, in start order. */
function affectedApps(files) {
  const apps = new Set();
  for (const file of files) {
    const [top, name] = path.relative(root, file).split(path.sep);
    if (top === 'apps' && APPS.includes(name)) apps.add(name);
    else return [...APPS];
  }
  return APPS.filter((app) => apps.has(app));
}

async function startApp(app, port) {
  if (app === 'edge-gateway') edgeHasConsole = fs.existsSync(path.join(CONSOLE_DIR, 'assets'));
  try {
    await suite.start(app, app === 'edge-gateway' ? { port } : {});
    return true;
  } catch (error) {
    log(`${app} did not start: ${error.message}`);
    return false;
  }
}

async function main() {
  const env = localEnv();
  const port = Number(env.PORT || 8080);
  console.log('checking PostgreSQL, Redis and NATS...');
  stopInfra = await ensureInfra(env);
  console.log('building...');
  build({ quiet: true, withConsole: false });
  consoleWatcher = await watchConsole({
    onBuild: (error, ms) => {
      if (shuttingDown) return;
      if (error) {
        log(
          `the console did not build (see above): ${suite ? 'the last good build is still served' : '/console answers 503 until it does'}; fix the file and save`,
        );
        return;
      }
      if (!suite) return;
      log(`console rebuilt in ${(ms / 1000).toFixed(1)} s: reload the page`);
      // An edge started without a console build serves none until it restarts.
      if (!edgeHasConsole) {
        cycle = cycle.then(async () => {
          if (shuttingDown || edgeHasConsole) return;
          await suite.stop('edge-gateway');
          if (await startApp('edge-gateway', port)) log('edge-gateway restarted: it serves the console now');
        });
      }
    },
  });
  const account = await prepareDatabase(env);

  suite = new Suite({ env });
  const shutdown = async (code) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log('\nstopping...');
    await watcher?.close();
    await consoleWatcher?.close();
    await suite.stopAll();
    stopInfra();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  // Unlike `npm start`, a crash does not end the session: the next save rebuilds and restarts it.
  suite.onUnexpectedExit = (id, code, signal) => log(`${id} exited (${signal ?? `code ${code}`}); save a file to rebuild and restart it`);

  for (const app of APPS) {
    if (!(await startApp(app, port))) throw new Error(`${app} did not start; see its output above`);
  }
  console.log(
    `${greeting(env, port, account)}\nWatching apps/*/src, libs/*/src and config/ for changes, and apps/console (rebuilt into dist/apps/console: reload the page). Press Ctrl-C to stop.\n`,
  );

  const changed = new Set();
  let settleTimer;
  const rebuildAndRestart = async () => {
    const files = [...changed];
    changed.clear();
    const apps = affectedApps(files);
    const names = files.map((file) => path.relative(root, file));
    // config/ is read at run time, not built; libs are built with every app.
    const needsBuild = names.some((name) => !name.startsWith(`config${path.sep}`));
    log(`${names.length === 1 ? names[0] : `${names.length} files`} changed: ${needsBuild ? 'rebuilding and ' : ''}restarting ${apps.join(', ')}`);
    const started = Date.now();
    try {
      if (needsBuild) build({ quiet: false, apps });
    } catch {
      log('build failed (see above); the running services are unchanged');
      return;
    }
    await Promise.all(apps.map((app) => suite.stop(app)));
    const results = [];
    for (const app of apps) results.push(await startApp(app, port));
    if (shuttingDown) return;
    if (results.every(Boolean)) log(`ready again in ${((Date.now() - started) / 1000).toFixed(1)} s: http://localhost:${port}/v1`);
  };

  watcher = chokidar.watch(watchedDirs(), { ignoreInitial: true, ignored: (file) => isTest(file) });
  watcher.on('all', (event, file) => {
    if (shuttingDown || !['add', 'change', 'unlink'].includes(event)) return;
    changed.add(file);
    clearTimeout(settleTimer);
    // One cycle at a time: changes made during a rebuild are handled right after it.
    settleTimer = setTimeout(() => {
      cycle = cycle.then(() => (changed.size > 0 && !shuttingDown ? rebuildAndRestart() : undefined));
    }, SETTLE_MS);
  });
  watcher.on('error', (error) => log(`watcher: ${error.message}`));
}

main().catch(async (error) => {
  console.error(`npm run dev failed: ${error.message}`);
  await watcher?.close();
  await consoleWatcher?.close();
  await suite?.stopAll().catch(() => undefined);
  stopInfra();
  process.exit(1);
});
