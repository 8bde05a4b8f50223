'use strict';
// npm run build [-- <app>]: compile every app (or one) and the libs into dist/.
const { build } = require('./lib/build');

const app = process.argv[2];
build({ apps: app ? [app] : undefined });
console.log(`built dist/ (${app ?? 'all apps'})`);
