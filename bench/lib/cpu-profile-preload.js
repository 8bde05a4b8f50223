'use strict';
/**
 * Preloaded (`--require`) into each service when BENCH_CPU_PROF is set: node 20 refuses
 * `--cpu-prof` in NODE_OPTIONS, so the profiler is driven through the inspector instead and the
 * profile written as `<dir>/<pid>-<entry app>.cpuprofile` when the process exits.
 */
const fs = require('node:fs');
const inspector = require('node:inspector');
const path = require('node:path');

const dir = process.env.BENCH_CPU_PROF;
const app = /apps\/([^/]+)\//.exec(process.argv[1] ?? '')?.[1] ?? path.basename(process.argv[1] ?? 'node');
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.start');
process.once('exit', () => {
  // An in-thread session answers synchronously, so the profile is written before the process ends.
  session.post('Profiler.stop', (error, result) => {
    if (!error) fs.writeFileSync(path.join(dir, `${process.pid}-${app}.cpuprofile`), JSON.stringify(result.profile));
  });
});
