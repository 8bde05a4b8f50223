/**
 * The usage series query, on its own (no imports) so that bench/console-queries.js measures the very
 * SQL the service runs.
 */

export interface SeriesRow {
  start: string;
  date: string;
  grp: string;
  requests: string;
  input_tokens: string;
  output_tokens: string;
  credits: string;
}

/**
 * Which rollups a series reads. `hours`: an hour of usage_rollups_hourly wherever it lies whole in one
 * local bucket, the quarter hours of usage_rollups only for the hours a local boundary cuts (day
 * buckets in any zone, hour buckets in a zone whole hours from UTC). `quarters`: only the quarter
 * hours (hour buckets in a zone such as Asia/Kolkata, where every local hour cuts a UTC hour).
 */
export type SeriesSource = 'hours' | 'quarters';

const GROUP_COLUMN = { model: 'r.model', key: 'r.key_id', route: 'r.route', none: "'all'" } as const;

const EPOCH = "TIMESTAMPTZ '2000-01-01 00:00:00+00'";
const DATE_FORMAT = { day: 'YYYY-MM-DD', hour: 'YYYY-MM-DD"T"HH24:00' } as const;
const SUMS = 'sum(r.requests) AS requests, sum(r.input_tokens) AS input_tokens, sum(r.output_tokens) AS output_tokens, sum(r.credits) AS credits';

/**
 * Usage per local hour or day of a time zone, from the rollups (never from usage_logs): every day and
 * hour of a real time zone is a whole number of quarter hours, so the local buckets are exact. Each
 * hour (or quarter hour) of the span is turned into its local hour or day once (not once per rollup
 * row), the rollups are summed per local bucket and group, and each local start is turned back into
 * an instant. Integers and credits come back as text (exact).
 * Parameters: $1 account id, $2 from and $3 to (quarter-hour buckets starting in [from, to)), $4 the
 * IANA time zone, $5 `hour` or `day`, then one key id per key filter.
 */
export function seriesSql(groupBy: keyof typeof GROUP_COLUMN, bucket: keyof typeof DATE_FORMAT, keyFilters: number, source: SeriesSource = 'hours'): string {
  const keys = Array.from({ length: keyFilters }, (_, i) => ` AND r.key_id = $${6 + i}`).join('');
  const group = GROUP_COLUMN[groupBy];
  const local = (at: string) => `date_trunc($5::text, ${at} AT TIME ZONE $4::text)`;
  const sums =
    source === 'quarters'
      ? `
    slots AS (
      SELECT b AS bucket, ${local('b')} AS local_start
      FROM generate_series(date_bin('15 minutes', $2::timestamptz, ${EPOCH}), $3::timestamptz, interval '15 minutes') AS b
    ),
    sums AS (
      SELECT s.local_start, ${group} AS grp, ${SUMS}
      FROM usage_rollups r JOIN slots s ON s.bucket = r.bucket
      WHERE r.account_id = $1 AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz${keys}
      GROUP BY 1, 2
    )`
      : `
    hours AS (
      -- An hour is whole when its four quarters all start in [from, to) and in the same local bucket.
      SELECT h AS hour, ${local('h')} AS local_start,
             (h >= $2::timestamptz AND h + interval '45 minutes' < $3::timestamptz
              AND ${local('h')} = ${local("(h + interval '45 minutes')")}) AS whole
      FROM generate_series(date_bin('1 hour', $2::timestamptz, ${EPOCH}), $3::timestamptz, interval '1 hour') AS h
    ),
    cut AS (
      SELECT q FROM hours, generate_series(hours.hour, hours.hour + interval '45 minutes', interval '15 minutes') AS q
      WHERE NOT hours.whole AND q >= $2::timestamptz AND q < $3::timestamptz
    ),
    parts AS (
      SELECT h.local_start, ${group} AS grp, r.requests, r.input_tokens, r.output_tokens, r.credits
      FROM usage_rollups_hourly r JOIN hours h ON h.hour = r.bucket
      WHERE h.whole AND r.account_id = $1 AND r.bucket >= date_bin('1 hour', $2::timestamptz, ${EPOCH}) AND r.bucket < $3::timestamptz${keys}
      UNION ALL
      -- Few quarters (one cut hour per local day at most, outside DST changes): looked up one by one.
      SELECT ${local('r.bucket')}, ${group}, r.requests, r.input_tokens, r.output_tokens, r.credits
      FROM usage_rollups r
      WHERE r.account_id = $1 AND r.bucket = ANY (ARRAY(SELECT q FROM cut))${keys}
    ),
    sums AS (
      SELECT r.local_start, r.grp, ${SUMS} FROM parts r GROUP BY 1, 2
    )`;
  return `
    WITH ${sums}
    SELECT extract(epoch FROM local_start AT TIME ZONE $4::text)::bigint::text AS start, to_char(local_start, '${DATE_FORMAT[bucket]}') AS date,
           grp, requests::text, input_tokens::text, output_tokens::text, credits::text
    FROM sums
    ORDER BY local_start, grp`;
}
