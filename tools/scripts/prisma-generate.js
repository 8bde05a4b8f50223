'use strict';
// postinstall: generate the Prisma client (no schema engine needed, see lib/prisma.js).
const path = require('node:path');
const fs = require('node:fs');

if (fs.existsSync(path.join(__dirname, '..', '..', 'libs', 'db', 'prisma', 'schema.prisma'))) {
  require('./lib/prisma').generate();
}
