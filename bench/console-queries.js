'use strict';
/**
 * npm run bench:console: how fast the usage console's two queries stay at scale, against real
 * PostgreSQL, with the very SQL account-service runs.
 *
 * 1. a scratch database (`console_bench_<pid>` on postgres://postgres@127.0.0.1:5432, trust auth;
 *    BENCH_DATABASE_URL names another server) with the project's migrations applied by its own
 *    runner (libs/db/src/migrate.ts);
 * 2. 1,000,000 usage_logs rows over the last 90 days for one account: 8 keys, 6 models, 4 routes
 *    (each key uses two models, each model one route), one INSERT .. SELECT from generate_series; then the matching usage_rollups with one
 *    INSERT .. SELECT .. GROUP BY (the backfill of the rollups migration: the ledger's statement
 *    writes the same rows request by request), and the hourly rollups from those; ANALYZE;
 * 3. RUNS (default 50) timed runs after 5 warm-ups of each query:
 *    - the usage series: 30 days, day buckets, group_by model, Asia/Kolkata
 *      (apps/account-service/src/usage/usage.sql.ts, as `/v1/user/usage` runs it: hourly rollups,
 *      quarter hours for the hour each local midnight cuts);
 *    - the usage series: 7 days, hour buckets, group_by key, Asia/Kolkata (quarter hours only: every
 *      local hour there cuts a UTC hour);
 *    - a filtered log page: key_id + model + 7-day range, 50 rows (51 fetched, as `/v1/user/logs`
 *      does to know whether a next page follows), newest first;
 *    - for scale, the floor: the series' rollup rows summed with no grouping or time zone;
 *    and prints p50/p95/max, the machine's load average and each query's plan; exits 1 when a
 *    query's p95 is 200 ms or more;
 * 4. drops the scratch database (BENCH_KEEP_DB=1 keeps it).
 *
 * Knobs: BENCH_ROWS (1000000), RUNS (50), BENCH_DATABASE_URL.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');
const { Client } = require('pg');

const root = path.join(__dirname, '..');
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.RUNS ?? 50);
const WARMUP = 5;
const DAYS = 90;
const ACCOUNT = 'acct_console_bench';
const KEYS = Array.from({ length: 8 }, (_, i) => `key_console_bench_${i}`);
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4', 'claude-haiku-4', 'llama-3.3-70b', 'text-embedding-3-small'];
const ROUTES = ['chat.completions', 'responses', 'messages', 'embeddings'];

/** A TypeScript module of the project with no imports of its own, loaded as it is (transpiled in memory). */
function loadTs(relative) {
  const file = path.join(root, relative);
  const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    fileName: file,
  });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  mod._compile(outputText, file);
  return mod.exports;
}

const { migrate } = loadTs('libs/db/src/migrate.ts');
const { seriesSql } = loadTs('apps/account-service/src/usage/usage.sql.ts');

/** The log page query `UsageRepository.logs` builds for these filters (key_id, model, since, until). */
const LOG_PAGE_SQL = `
  SELECT request_id, key_id, masked_key, model, route, credits, created_at, status, ip, input_tokens, output_tokens, refused_by,
         cache_read_tokens, cache_write_tokens
  FROM usage_logs WHERE account_id = $1 AND key_id = $2 AND model = $3 AND created_at >= $4 AND created_at < $5
  ORDER BY created_at DESC, request_id DESC
  LIMIT $6`;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function time(client, sql, params) {
  for (let i = 0; i < WARMUP; i++) await client.query(sql, params);
  const samples = [];
  let rows = 0;
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    const result = await client.query(sql, params);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    rows = result.rowCount;
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), max: samples[samples.length - 1], rows };
}

async function plan(client, sql, params) {
  const result = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  return result.rows.map((row) => row['QUERY PLAN']).join('\n');
}

async function main() {
  const server = new URL(process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  const name = `console_bench_${process.pid}`;
  const admin = new Client({ connectionString: server.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const client = new Client({ connectionString: url.toString() });
  try {
    let at = Date.now();
    const step = (label) => {
      console.log(`${label} (${((Date.now() - at) / 1000).toFixed(1)} s)`);
      at = Date.now();
    };
    const { applied } = await migrate(url.toString());
    step(`scratch database ${name}: ${applied.length} migrations applied`);
    await client.connect();
    await client.query(`INSERT INTO accounts (id, plan, credits) VALUES ($1, 'enterprise', 1000000)`, [ACCOUNT]);
    await client.query(
      `INSERT INTO api_keys (id, account_id, type, key_hash, masked_key, name)
       SELECT k, $1, (CASE WHEN i = 1 THEN 'master' ELSE 'proxy' END)::"KeyType", md5(k), 'ek-...' || lpad(i::text, 4, '0'), 'key ' || i
       FROM unnest($2::text[]) WITH ORDINALITY AS t(k, i)`,
      [ACCOUNT, KEYS],
    );
    // Spread evenly over the last 90 days, round-robin over the keys; each key uses two models (so 16
    // key-model pairs), each model one route: 16 rollup rows per 15-minute bucket.
    await client.query(
      `INSERT INTO usage_logs (request_id, account_id, key_id, key_type, masked_key, model, route, status, input_tokens, output_tokens,
                               cache_read_tokens, cache_write_tokens, credits, ip, created_at)
       SELECT 'req_' || md5(n::text), $1, ($2::text[])[1 + n % 8], (CASE WHEN n % 8 = 0 THEN 'master' ELSE 'proxy' END)::"KeyType",
              'ek-...' || lpad((1 + n % 8)::text, 4, '0'), ($3::text[])[1 + (n % 8 + (n / 8) % 2) % 6], ($4::text[])[1 + (n % 8 + (n / 8) % 2) % 6 % 4],
              (CASE WHEN n % 50 = 0 THEN 'error' ELSE 'success' END)::"UsageStatus", 100 + n % 900, 20 + n % 400, n % 5, 0,
              ((100 + n % 900) * 0.000000125 + (20 + n % 400) * 0.0000005)::numeric(24, 12), '10.0.0.' || (n % 250),
              now() - make_interval(secs => (n::double precision / $5) * $6 * 86400)
       FROM generate_series(0, $5 - 1) AS n`,
      [ACCOUNT, KEYS, MODELS, ROUTES, ROWS, DAYS],
    );
    step(`${ROWS.toLocaleString('en-US')} usage_logs rows over ${DAYS} days`);
    const rollups = await client.query(
      `INSERT INTO usage_rollups (account_id, bucket, key_id, model, route, requests, input_tokens, output_tokens, cache_read_tokens,
                                  cache_write_tokens, credits)
       SELECT account_id, date_bin('15 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), key_id, model, route, count(*),
              coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cache_read_tokens), 0),
              coalesce(sum(cache_write_tokens), 0), sum(credits)
       FROM usage_logs WHERE status <> 'refused' GROUP BY 1, 2, 3, 4, 5`,
    );
    step(`${rollups.rowCount.toLocaleString('en-US')} usage_rollups rows (one INSERT .. SELECT .. GROUP BY)`);
    const hourly = await client.query(
      `INSERT INTO usage_rollups_hourly (account_id, bucket, key_id, model, route, requests, input_tokens, output_tokens, cache_read_tokens,
                                         cache_write_tokens, credits)
       SELECT account_id, date_bin('1 hour', bucket, TIMESTAMPTZ '2000-01-01 00:00:00+00'), key_id, model, route, sum(requests),
              sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens), sum(credits)
       FROM usage_rollups GROUP BY 1, 2, 3, 4, 5`,
    );
    step(`${hourly.rowCount.toLocaleString('en-US')} usage_rollups_hourly rows (the hours of the quarter-hour rows)`);
    await client.query('ANALYZE');
    step('ANALYZE');

    const now = new Date();
    const series = {
      label: 'usage series: 30 days, day buckets, group_by model, Asia/Kolkata',
      sql: seriesSql('model', 'day', 0),
      params: [ACCOUNT, new Date(now.getTime() - 30 * 86_400_000), now, 'Asia/Kolkata', 'day'],
    };
    const hourSeries = {
      label: 'usage series: 7 days, hour buckets, group_by key, Asia/Kolkata',
      // The source the repository picks for hour buckets in a zone half an hour off UTC.
      sql: seriesSql('key', 'hour', 0, 'quarters'),
      params: [ACCOUNT, new Date(now.getTime() - 7 * 86_400_000), now, 'Asia/Kolkata', 'hour'],
    };
    const page = {
      label: 'log page: key_id + model + 7 days, 50 rows, newest first',
      sql: LOG_PAGE_SQL,
      params: [ACCOUNT, KEYS[3], MODELS[3], new Date(now.getTime() - 7 * 86_400_000), now, 51],
    };
    // The floor on this machine: the same rollup rows summed without grouping or time zones.
    const floor = {
      label: 'floor: the 30 days of quarter-hour rollup rows, one sum',
      sql: `SELECT count(*), sum(credits)::text FROM usage_rollups WHERE account_id = $1 AND bucket >= $2 AND bucket < $3`,
      params: series.params.slice(0, 3),
    };
    const results = [];
    for (const query of [series, hourSeries, page, floor]) {
      const measured = await time(client, query.sql, query.params);
      results.push({
        query: query.label,
        rows: measured.rows,
        'p50 ms': measured.p50.toFixed(2),
        'p95 ms': measured.p95.toFixed(2),
        'max ms': measured.max.toFixed(2),
      });
    }
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    const load = os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
    console.log(
      `\n${RUNS} runs each (after ${WARMUP} warm-ups), PostgreSQL ${version}, Node.js ${process.version}, ${os.cpus().length} CPUs, load average ${load}`,
    );
    console.table(results);
    for (const query of [series, hourSeries, page]) console.log(`\n${query.label}:\n${await plan(client, query.sql, query.params)}`);
    const slow = results.slice(0, 3).filter((result) => Number(result['p95 ms']) >= 200);
    if (slow.length > 0) {
      console.error(`p95 at or over 200 ms: ${slow.map((result) => result.query).join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    await client.end().catch(() => undefined);
    if (process.env.BENCH_KEEP_DB === '1') console.log(`kept ${name}`);
    else await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
