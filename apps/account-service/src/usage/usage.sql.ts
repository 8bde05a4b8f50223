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

const GROUP_COLUMN = { model: 'r.model', key: 'r.key_id', route: 'r.route', none: "'all'" } as const;

/** The start of the 15-minute rollup bucket of a timestamp, as metering-service writes them. */
const ROLLUP_BUCKET_SQL = (at: string) => `date_bin('15 minutes', ${at}, TIMESTAMPTZ '2000-01-01 00:00:00+00')`;
const DATE_FORMAT = { day: 'YYYY-MM-DD', hour: 'YYYY-MM-DD"T"HH24:00' } as const;

/**
 * Usage per local hour or day of a time zone, from the 15-minute rollups (never from usage_logs):
 * every day and hour of a real time zone is a whole number of quarter hours, so the local buckets
 * are exact. Each quarter hour of the span is turned into its local hour or day once (\`slots\`,
 * not once per rollup row), the rollups are summed per local bucket and group, and each local
 * start is turned back into an instant. Integers and credits come back as text (exact).
 * Parameters: $1 account id, $2 from and $3 to (bucket starts, [from, to)), $4 the IANA time zone,
 * $5 \`hour\` or \`day\`, then one key id per key filter.
 */
export function seriesSql(groupBy: keyof typeof GROUP_COLUMN, bucket: keyof typeof DATE_FORMAT, keyFilters: number): string {
  const keys = Array.from({ length: keyFilters }, (_, i) => ` AND r.key_id = $${6 + i}`).join('');
  return `
    WITH slots AS (
      SELECT b AS bucket, date_trunc($5::text, b AT TIME ZONE $4::text) AS local_start
      FROM generate_series(${ROLLUP_BUCKET_SQL('$2::timestamptz')}, $3::timestamptz, interval '15 minutes') AS b
    ),
    sums AS (
      SELECT s.local_start, ${GROUP_COLUMN[groupBy]} AS grp, sum(r.requests) AS requests, sum(r.input_tokens) AS input_tokens,
             sum(r.output_tokens) AS output_tokens, sum(r.credits) AS credits
      FROM usage_rollups r JOIN slots s ON s.bucket = r.bucket
      WHERE r.account_id = $1 AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz${keys}
      GROUP BY 1, 2
    )
    SELECT extract(epoch FROM local_start AT TIME ZONE $4::text)::bigint::text AS start, to_char(local_start, '${DATE_FORMAT[bucket]}') AS date,
           grp, requests::text, input_tokens::text, output_tokens::text, credits::text
    FROM sums
    ORDER BY local_start, grp`;
}
