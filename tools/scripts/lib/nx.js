'use strict';
/** Runs Nx for the test scripts: no daemon, no TUI, no cache, and one closing line of counts. */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');
const summaryDir = path.join(root, 'tmp', 'test-summary');

/** Resolves true when Nx exits 0. Jest runs record their counts in summaryDir (tools/jest/summary-reporter.js). */
function nx(args, env = process.env) {
  const result = spawnSync(process.execPath, [require.resolve('nx/bin/nx.js', { paths: [root] }), ...args], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...env,
      NX_DAEMON: 'false',
      NX_TUI: 'false',
      NX_NO_CLOUD: 'true',
      NX_SKIP_NX_CACHE: 'true',
      GATEWAY_TEST_SUMMARY_DIR: summaryDir,
    },
  });
  return result.status === 0;
}

function resetSummary() {
  fs.rmSync(summaryDir, { recursive: true, force: true });
}

/** The line CI reads: `N passed, N failed[, N skipped]`, summed over every jest run since resetSummary. */
function summaryLine() {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const file of fs.existsSync(summaryDir) ? fs.readdirSync(summaryDir) : []) {
    const counts = JSON.parse(fs.readFileSync(path.join(summaryDir, file), 'utf8'));
    for (const key of Object.keys(totals)) totals[key] += counts[key];
  }
  return `${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`;
}

module.exports = { nx, resetSummary, summaryLine };
