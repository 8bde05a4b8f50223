'use strict';
/**
 * npm test: infrastructure up (started or installed when missing), build, then every project's unit
 * tests, the integration tests, and the end-to-end suite, through Nx. Ends with one summary line.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { build } = require('./lib/build');
const { ensureInfra, defaults } = require('./lib/infra');

const root = path.resolve(__dirname, '..', '..');
const summaryDir = path.join(root, 'tmp', 'test-summary');

function nx(args) {
  const result = spawnSync(process.execPath, [require.resolve('nx/bin/nx.js', { paths: [root] }), ...args], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      NX_DAEMON: 'false',
      NX_TUI: 'false',
      NX_NO_CLOUD: 'true',
      NX_SKIP_NX_CACHE: 'true',
      GATEWAY_TEST_SUMMARY_DIR: summaryDir,
    },
  });
  return result.status === 0;
}

function summary() {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const file of fs.existsSync(summaryDir) ? fs.readdirSync(summaryDir) : []) {
    const counts = JSON.parse(fs.readFileSync(path.join(summaryDir, file), 'utf8'));
    for (const key of Object.keys(totals)) totals[key] += counts[key];
  }
  return totals;
}

async function main() {
  fs.rmSync(summaryDir, { recursive: true, force: true });
  const stopInfra = await ensureInfra({ ...defaults, ...process.env });
  build({ quiet: true });
  const common = ['--parallel=1', '--outputStyle=stream', '--skipNxCache'];
  const steps = [
    ['unit', ['run-many', '-t', 'test', ...common]],
    ['integration', ['run-many', '-t', 'int', ...common]],
    ['end-to-end', ['run', 'gateway-e2e:e2e', ...common.slice(1)]],
  ];
  const failedSteps = steps.filter(([, args]) => !nx(args)).map(([name]) => name);
  stopInfra();
  const { passed, failed, skipped } = summary();
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  if (failedSteps.length > 0) {
    console.error(`failed: ${failedSteps.join(', ')} tests`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(`npm test could not run: ${error.message}`);
  process.exit(1);
});
