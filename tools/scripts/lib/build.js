'use strict';
/**
 * Compiles every app and lib with swc into dist/ (the source tree kept, path aliases rewritten), and
 * the web console (apps/console) with Vite into dist/apps/console.
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

/** The web console: React and TypeScript bundled by Vite into dist/apps/console (hashed asset names). */
function buildConsole({ quiet = false } = {}) {
  execFileSync(
    process.execPath,
    [
      path.join(path.dirname(require.resolve('vite/package.json', { paths: [root] })), 'bin', 'vite.js'),
      'build',
      '--config',
      'apps/console/vite.config.mts',
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

/** @param {{quiet?: boolean, apps?: string[]}} options compile only these apps (and the libs) when given */
function build({ quiet = false, apps } = {}) {
  for (const app of apps ?? []) {
    if (!WEB_APPS.includes(app) && !fs.existsSync(path.join(root, 'apps', app, 'src', 'main.ts'))) throw new Error(`unknown app: ${app}`);
  }
  const serverApps = (apps ?? fs.readdirSync(path.join(root, 'apps'))).filter((app) => !WEB_APPS.includes(app));
  if (!apps || apps.includes('console')) buildConsole({ quiet });
  if (apps && serverApps.length === 0) return;
  ensurePrismaClient();
  const sources = [...serverApps.map((app) => `apps/${app}`), 'libs'];
  execFileSync(
    process.execPath,
    [require.resolve('@swc/cli/bin/swc.js', { paths: [root] }), ...sources, '-d', 'dist', '--config-file', swcConfig(), '--copy-files', '--quiet'],
    { cwd: root, stdio: quiet ? 'ignore' : 'inherit' },
  );
}

module.exports = { build, buildConsole, root };
