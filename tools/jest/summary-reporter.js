'use strict';
/** Records each jest run's counts so `npm test` can print one closing line for the whole workspace. */
const fs = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
  }

  onRunComplete(_contexts, results) {
    const dir = process.env.GATEWAY_TEST_SUMMARY_DIR;
    if (!dir) return;
    fs.mkdirSync(dir, { recursive: true });
    const name = `${process.pid}-${Date.now()}.json`;
    fs.writeFileSync(
      path.join(dir, name),
      JSON.stringify({
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
      }),
    );
  }
}

module.exports = SummaryReporter;
