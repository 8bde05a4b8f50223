'use strict';
/**
 * `prisma generate` without the schema engine binary, which cannot be downloaded everywhere: the
 * rust-free client needs no engine, and generate only needs the variable to name an executable.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');

function generate() {
  const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
  if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.platform === 'win32' ? process.execPath : '/bin/true';
  execFileSync(process.execPath, [require.resolve('prisma/build/index.js', { paths: [root] }), 'generate'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

module.exports = { generate };
