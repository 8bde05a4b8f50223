import { defineConfig } from 'prisma/config';

// The Prisma CLI (migrate, db pull) needs a session of its own: behind a transaction-mode pooler it
// goes to the database directly. Prisma 7 has no `directUrl`; the services' URL is given to their
// driver adapter (libs/db/src/prisma.service.ts), not read from here.
export default defineConfig({
  schema: 'libs/db/prisma/schema.prisma',
  migrations: { path: 'libs/db/prisma/migrations' },
  datasource: { url: process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL || 'postgresql://postgres:postgres@127.0.0.1:5432/gateway' },
});
