'use strict';
/**
 * The ledger side of the bench: how far metering is behind, and whether the ledger holds exactly one
 * entry per served request.
 *
 * - `waitCaughtUp`: polls (every 200 ms, bounded) until the ledger (`usage_logs` in the bench's own
 *   database) holds at least the rows expected (and, given `ids`, a row for each of those requests),
 *   the JetStream consumer metering reads has nothing pending or unacknowledged, and the row count
 *   stayed the same over one more poll. It returns the
 *   CPU snapshot taken at the poll where the count reached its final value, so the CPU metering spent
 *   catching up counts towards the run, and the idle polls after it do not.
 * - `check`: one query after a run: every 2xx answer's `x-request-id` must have its ledger row, the
 *   ids must be distinct, and the rows the run added beyond those may only be requests that were not
 *   answered 2xx (the autocannon connections cut at the end of the run, non-2xx answers, errors);
 *   with `keyId` (a run authorised by one proxy key), every one of those rows must be charged to
 *   that key, with credits above zero;
 * - `keyIdOf`: the id of the key with a given value (its lookup hash, as key-service stores it).
 *
 * The polls cost PostgreSQL and NATS a little CPU; the bench's own PostgreSQL backend is left out of
 * the CPU figures (`backendPid`).
 */
const { createHash } = require('node:crypto');
const { Client } = require('pg');

const STREAM = 'USAGE'; // libs/contracts/src/streams.ts
const CONSUMER = 'metering';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function openLedger({ databaseUrl, natsUrl }) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const backendPid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  let nats = null;
  let jsm = null;
  try {
    const { connect } = require('nats');
    nats = await connect({ servers: natsUrl, name: 'bench-ledger-check' });
    jsm = await nats.jetstreamManager();
  } catch {
    nats = null; // fall back to the row count alone
  }

  const rowCount = async () => Number((await client.query('SELECT count(*)::bigint AS n FROM usage_logs')).rows[0].n);

  /** How many of `ids` (distinct) the ledger holds. */
  const idsHeld = async (ids) =>
    Number((await client.query('SELECT count(*)::bigint AS n FROM usage_logs WHERE request_id = ANY($1::text[])', [ids])).rows[0].n);

  /** Messages of the usage stream the metering consumer has not taken or not acknowledged yet (null: unknown). */
  const backlog = async () => {
    if (!jsm) return null;
    try {
      const info = await jsm.consumers.info(STREAM, CONSUMER);
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    } catch {
      return null;
    }
  };

  /**
   * PostgreSQL server processes that work for the bench's database: its client backends (the bench's
   * own excepted) and the background processes (WAL writer, checkpointer...), as pids of this machine.
   * Other databases on the same server (other checkouts' tests) are left out. Null when that cannot
   * be told (no access to pg_stat_activity).
   */
  const serverPids = async () => {
    try {
      const { rows } = await client.query(
        `SELECT pid FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND (datname = current_database() OR backend_type <> 'client backend')`,
      );
      return rows.map((row) => Number(row.pid));
    } catch {
      return null;
    }
  };

  /**
   * @param {object} options
   * @param {number} options.atLeast rows the ledger must hold at least
   * @param {number} options.maxMs bound on the wait
   * @param {() => object} options.snapshot takes a CPU snapshot (lib/cpu.js)
   * @param {() => boolean} [options.shouldStop]
   * @param {string[]} [options.ids] request ids that must all be in the ledger: a count reached by
   *   other rows (streams cut at the same level, billed first) does not end the wait while one of
   *   these is still on its way
   */
  const waitCaughtUp = async ({ atLeast, maxMs, snapshot, shouldStop = () => false, ids }) => {
    const wanted = ids ? [...new Set(ids)] : null;
    const start = Date.now();
    let previous = null;
    let stableFrom = null; // { snapshot, at, count } of the poll where the count reached its current value
    let last = null;
    for (;;) {
      const at = Date.now();
      const snap = snapshot();
      const count = await rowCount();
      const queue = await backlog();
      last = { count, queue };
      if (count !== previous) stableFrom = { snapshot: snap, at, count };
      const drained = queue === null || (queue.pending === 0 && queue.ackPending === 0);
      const allHeld = wanted === null || wanted.length === 0 || (count >= atLeast && (await idsHeld(wanted)) === wanted.length);
      if (count >= atLeast && drained && count === previous && allHeld) {
        return { caughtUp: true, count, backlog: queue, caughtUpAfterMs: stableFrom.at - start, snapshot: stableFrom.snapshot };
      }
      previous = count;
      if (Date.now() - start > maxMs || shouldStop()) {
        return { caughtUp: false, count, backlog: queue, caughtUpAfterMs: null, waitedMs: Date.now() - start, snapshot: snap, last };
      }
      await sleep(200);
    }
  };

  /** The id of the key whose value this is (null: none), by its SHA-256 lookup hash (apps/key-service/src/crypto). */
  const keyIdOf = async (value) => {
    const hash = createHash('sha256').update(value).digest('hex');
    const { rows } = await client.query('SELECT id FROM api_keys WHERE key_hash = $1', [hash]);
    return rows[0]?.id ?? null;
  };

  /**
   * @param {object} options
   * @param {string[]} options.ids x-request-id of every 2xx answer of the run
   * @param {number} options.ok the 2xx answers of the run
   * @param {number} options.rowsBefore ledger rows before the run
   * @param {number} options.rowsAfter ledger rows once caught up
   * @param {number} options.allowedExtra requests the run may have had served and metered without a 2xx answer
   * @param {boolean} options.caughtUp whether waitCaughtUp saw metering catch up
   * @param {string} [options.keyId] the proxy key that authorised every request of the run: its rows must be charged to it
   */
  const check = async ({ ids, ok, rowsBefore, rowsAfter, allowedExtra, caughtUp, keyId }) => {
    const distinct = new Set(ids);
    const { rows } = await client.query(
      `SELECT count(*)::bigint AS n,
              count(*) FILTER (WHERE key_id = $2 AND credits > 0)::bigint AS charged,
              coalesce(sum(credits) FILTER (WHERE key_id = $2), 0)::text AS credits
         FROM usage_logs WHERE request_id = ANY($1::text[])`,
      [[...distinct], keyId ?? null],
    );
    const matched = Number(rows[0].n);
    const charged = Number(rows[0].charged);
    const added = rowsAfter - rowsBefore;
    const extra = added - matched;
    const problems = [];
    if (!caughtUp) problems.push('metering did not catch up within the bound');
    if (ids.length !== ok) problems.push(`${ok - ids.length} 2xx answer(s) without an x-request-id`);
    if (distinct.size !== ids.length) problems.push(`${ids.length - distinct.size} duplicate x-request-id(s) among the 2xx answers`);
    if (matched !== distinct.size) problems.push(`${distinct.size - matched} 2xx answer(s) without a ledger row`);
    if (extra < 0) problems.push(`the ledger lost ${-extra} row(s) during the run`);
    if (extra > allowedExtra) problems.push(`${extra} ledger row(s) beyond the 2xx answers, more than the ${allowedExtra} requests not answered 2xx`);
    if (keyId !== undefined && charged !== matched)
      problems.push(`${matched - charged} ledger row(s) of the 2xx answers not charged (credits > 0) to the proxy key ${keyId}`);
    return {
      pass: problems.length === 0,
      ok,
      requestIds: ids.length,
      distinct: distinct.size,
      matched,
      rowsAdded: added,
      extraRows: extra,
      allowedExtra,
      ...(keyId === undefined ? {} : { keyId, chargedToKey: charged, keyCredits: rows[0].credits }),
      problems,
    };
  };

  const close = async () => {
    await client.end().catch(() => undefined);
    if (nats) await nats.close().catch(() => undefined);
  };

  /**
   * Of `local` (the pids of this machine's postgres processes), those serving the bench's database
   * (its backends and the server's own processes); when PostgreSQL does not say, every one of them
   * but this check's own backend.
   */
  const postgresPids = async (local) => {
    const working = await serverPids();
    const mine = working ? working.filter((pid) => local.includes(pid)) : [];
    return mine.length ? mine : local.filter((pid) => pid !== backendPid);
  };

  return { backendPid, rowCount, backlog, serverPids, postgresPids, keyIdOf, waitCaughtUp, check, close, jetstream: Boolean(jsm) };
}

module.exports = { openLedger };
