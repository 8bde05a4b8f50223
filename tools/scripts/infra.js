'use strict';
/**
 * npm run infra: PostgreSQL, Redis and NATS (with JetStream) up, as `npm start` brings them up
 * (started when installed and stopped, installed from Debian's packages when missing and root),
 * then exits and leaves them running, so that `npm run serve`, a single test file or a debugger can
 * use them. Prints where each one answers.
 */
const { ensureInfra, defaults } = require('./lib/infra');

/** The URL without its password: the address is for reading, the credential stays in the env. */
function redact(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

async function main() {
  const env = { ...defaults, ...process.env };
  console.log('checking PostgreSQL, Redis and NATS...');
  // Not called: the servers this run started keep running after it exits, which is the point.
  await ensureInfra(env);
  console.log(`
Infrastructure is running (left running on exit; stop it with your service manager or kill the servers).

  PostgreSQL  DATABASE_URL=${redact(env.DATABASE_URL)}
  Redis       REDIS_URL=${redact(env.REDIS_URL)}
  NATS        NATS_URL=${redact(env.NATS_URL)} (JetStream on)
`);
}

main().catch((error) => {
  console.error(`npm run infra failed: ${error.message}`);
  process.exit(1);
});
