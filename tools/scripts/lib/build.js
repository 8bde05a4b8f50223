'use strict';
/**
 * Compiles every app and lib with swc into dist/ (the source tree kept, path aliases rewritten), and
 * the web console (apps/console) with Vite into dist/apps/console (once, or watching for `npm run dev`).
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');

function ensurePrismaClient() {
  if (!fs.existsSync(path.join(root, 'libs/db/src/generated/prisma/client.ts'))) {
    require('./prisma').generate();
  }
}

/**
 * The swc options: .swcrc with the path aliases of tsconfig.base.json, their one source (a new lib's
 * alias there is all the build needs).
 */
function swcConfig() {
  const config = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));
  const { paths } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8')).compilerOptions;
  config.jsc = { ...config.jsc, baseUrl: root, paths };
  const file = path.join(root, 'tmp', 'swcrc.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Browser apps, bundled by Vite rather than compiled by swc. */
const WEB_APPS = ['console'];

const CONSOLE_CONFIG = path.join(root, 'apps', 'console', 'vite.config.mts');
const CONSOLE_DIR = path.join(root, 'dist', 'apps', 'console');

/** The web console: React and TypeScript bundled by Vite into dist/apps/console (hashed asset names). */
function buildConsole({ quiet = false } = {}) {
  execFileSync(
    process.execPath,
    [
      path.join(path.dirname(require.resolve('vite/package.json', { paths: [root] })), 'bin', 'vite.js'),
      'build',
      '--config',
      CONSOLE_CONFIG,
      '--logLevel',
      quiet ? 'error' : 'info',
    ],
    {
      cwd: root,
      stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
      env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' },
    },
  );
}

/**
 * `npm run dev`'s console: Vite's build in watch mode (`vite build --watch`, through its JavaScript
 * API) into dist/apps/console, where the edge serves it: every save under apps/console rebuilds it,
 * and the next page load gets it (the edge reads index.html on each request; no restart). The
 * directory is emptied once, before the first build; rebuilds leave the previous chunks beside the
 * new ones, so a tab opened before a rebuild can still load the pages it has not visited yet.
 * Resolves once the first build has ended (built or failed) with the watcher (`close()` stops it);
 * `onBuild(error, ms)` is called after every build, the first included.
 * @param {{onBuild?: (error: Error | null, ms: number) => void}} options
 */
async function watchConsole({ onBuild = () => undefined } = {}) {
  process.env.VITE_CONFIG_NATIVE_IGNORE_WARNING = 'true';
  const vite = await import('vite');
  fs.rmSync(CONSOLE_DIR, { recursive: true, force: true });
  // Only warnings and errors from Vite itself; the builds are reported through onBuild.
  const watcher = await vite.build({ configFile: CONSOLE_CONFIG, logLevel: 'warn', build: { watch: {}, emptyOutDir: false } });
  let started = Date.now();
  let reported = false;
  await new Promise((resolve) => {
    watcher.on('event', async (event) => {
      if (event.code === 'START') {
        started = Date.now();
        reported = false;
        return;
      }
      // A failed build is one ERROR (Vite prints it: file, line, frame); its bundle is closed here.
      if (event.code === 'ERROR') await event.result?.close();
      if ((event.code !== 'END' && event.code !== 'ERROR') || reported) return;
      reported = true;
      onBuild(event.code === 'ERROR' ? event.error : null, Date.now() - started);
      resolve();
    });
  });
  return watcher;
}

/** @param {{quiet?: boolean, apps?: string[], withConsole?: boolean}} options compile only these apps (and the libs) when given; `withConsole: false` leaves the console out */
function build({ quiet = false, apps, withConsole = true } = {}) {
  for (const app of apps ?? []) {
    if (!WEB_APPS.includes(app) && !fs.existsSync(path.join(root, 'apps', app, 'src', 'main.ts'))) throw new Error(`unknown app: ${app}`);
  }
  const serverApps = (apps ?? fs.readdirSync(path.join(root, 'apps'))).filter((app) => !WEB_APPS.includes(app));
  if (withConsole && (!apps || apps.includes('console'))) buildConsole({ quiet });
  if (apps && serverApps.length === 0) return;
  ensurePrismaClient();
  const sources = [...serverApps.map((app) => `apps/${app}`), 'libs'];
  execFileSync(
    process.execPath,
    [require.resolve('@swc/cli/bin/swc.js', { paths: [root] }), ...sources, '-d', 'dist', '--config-file', swcConfig(), '--copy-files', '--quiet'],
    { cwd: root, stdio: quiet ? 'ignore' : 'inherit' },
  );
}

module.exports = { build, buildConsole, watchConsole, CONSOLE_DIR, root };
