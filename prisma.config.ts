import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'libs/db/prisma/schema.prisma',
  migrations: { path: 'libs/db/prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres:postgres@127.0.0.1:5432/gateway' },
});
