'use strict';
/**
 * npm run test:unit [-- <nx run-many flags>]: every project's unit tests (`*.spec.ts`, the `test`
 * target) and nothing else: no PostgreSQL, Redis or NATS, no build. Integration (`int`) and
 * end-to-end (`e2e`) tests are other targets, run by `npm test`. Two projects at a time, one per core.
 */
require('./lib/runtime').assertSupportedRuntime('npm run test:unit');
const { nx, resetSummary, summaryLine } = require('./lib/nx');

resetSummary();
const ok = nx(['run-many', '-t', 'test', '--parallel=2', '--outputStyle=stream', '--skipNxCache', ...process.argv.slice(2)]);
console.log(`\n${summaryLine()}`);
process.exit(ok ? 0 : 1);
