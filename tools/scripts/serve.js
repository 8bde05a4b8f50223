'use strict';
/**
 * nx serve <app> / npm run serve -- <app>: run one service alone, in the foreground, with the local
 * environment (infrastructure must answer; `npm start` runs the whole suite instead).
 */
require('./lib/runtime').assertSupportedRuntime('npm run serve');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { build } = require('./lib/build');
const { ensureInfra } = require('./lib/infra');
const { localEnv, root } = require('./lib/local-env');
const { APPS } = require('./lib/suite');

async function main() {
  const app = process.argv[2];
  if (!APPS.includes(app)) throw new Error(`usage: npm run serve -- <${APPS.join('|')}>`);
  const env = localEnv();
  await ensureInfra(env);
  build({ quiet: true, apps: [app] });
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, 'dist/apps', app, 'src/main.js')], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code) => process.exit(code ?? 0));
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
