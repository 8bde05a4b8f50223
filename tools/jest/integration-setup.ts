import { Client } from 'pg';
import { migrate } from '../../libs/db/src/migrate';

// Plain-JS tooling shared with `npm start`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureInfra, defaults } = require('../scripts/lib/infra');

const DATABASE = `gateway_int${process.env.TEST_NAMESPACE ? `_${process.env.TEST_NAMESPACE.replace(/\W/g, '')}` : ''}`;

/**
 * Integration tests run against real PostgreSQL, Redis and NATS on localhost, in a database of their
 * own, recreated and migrated once per run. Workers inherit DATABASE_URL from here.
 */
export default async function integrationSetup(): Promise<void> {
  await ensureInfra(process.env);
  const server = new URL(process.env.DATABASE_URL ?? defaults.DATABASE_URL);
  server.pathname = '/postgres';
  const admin = new Client({ connectionString: server.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  const url = new URL(server.toString());
  url.pathname = `/${DATABASE}`;
  await migrate(url.toString());
  process.env.INTEGRATION_DATABASE_URL = url.toString();
  process.env.INTEGRATION_SERVER_URL = server.toString();
  process.env.NATS_URL ??= defaults.NATS_URL;
}
