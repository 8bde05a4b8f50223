'use strict';
// npm run admin -- <command>: the operators' CLI (key-service's admin entrypoint) with the local environment.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { build } = require('./lib/build');
const { localEnv, root } = require('./lib/local-env');

const entry = path.join(root, 'dist', 'apps', 'key-service', 'src', 'cli', 'admin.cli.js');
build({ quiet: true });
const result = spawnSync(process.execPath, [entry, ...process.argv.slice(2)], { stdio: 'inherit', env: localEnv(), cwd: root });
process.exit(result.status ?? 1);
