'use strict';
/**
 * npm test: infrastructure up (started or installed when missing), build, then every project's unit
 * tests, the integration tests, and the end-to-end suite, through Nx. Ends with one summary line.
 */
require('./lib/runtime').assertSupportedRuntime('npm test');
const { build } = require('./lib/build');
const { ensureChromium, ensureInfra, defaults } = require('./lib/infra');
const { nx, resetSummary, summaryLine } = require('./lib/nx');
const { ensurePgbouncer } = require('./lib/pgbouncer');

async function main() {
  resetSummary();
  const stopInfra = await ensureInfra({ ...defaults, ...process.env });
  // Installed from Debian's packages when missing (as root) before any test runs, not inside a test's
  // time bound: Chromium for the console's browser tests, PgBouncer for the pooler integration test.
  ensureChromium();
  ensurePgbouncer();
  build({ quiet: true });
  const common = ['--parallel=1', '--outputStyle=stream', '--skipNxCache'];
  const steps = [
    ['unit', ['run-many', '-t', 'test', ...common]],
    ['integration', ['run-many', '-t', 'int', ...common]],
    ['end-to-end', ['run', 'gateway-e2e:e2e', ...common.slice(1)]],
  ];
  const failedSteps = steps.filter(([, args]) => !nx(args)).map(([name]) => name);
  stopInfra();
  console.log(`\n${summaryLine()}`);
  if (failedSteps.length > 0) {
    console.error(`failed: ${failedSteps.join(', ')} tests`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(`npm test could not run: ${error.message}`);
  process.exit(1);
});
