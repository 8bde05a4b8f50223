-- Usage per 15-minute bucket, account, key, model and route, written by metering-service in the
-- same statement as the request logs (refused requests excluded, as in daily_usage). Buckets are a
-- quarter of an hour so that a day in any real time zone (UTC offsets are whole quarter hours:
-- Asia/Kolkata +05:30, Asia/Kathmandu +05:45) is a whole number of buckets: the usage series in a
-- reporting time zone are summed from here, never from usage_logs.
CREATE TABLE "usage_rollups" (
    "account_id" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "key_id" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "input_tokens" BIGINT NOT NULL DEFAULT 0,
    "output_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_read_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_tokens" BIGINT NOT NULL DEFAULT 0,
    "credits" DECIMAL(24,12) NOT NULL DEFAULT 0,

    CONSTRAINT "usage_rollups_pkey" PRIMARY KEY ("account_id","bucket","key_id","model","route")
);

-- Per-key reads (a proxy or DevPass key's own series).
CREATE INDEX "usage_rollups_key_id_bucket_idx" ON "usage_rollups"("key_id", "bucket");

-- Backfill from the requests logged so far.
INSERT INTO "usage_rollups" ("account_id", "bucket", "key_id", "model", "route", "requests", "input_tokens", "output_tokens",
                             "cache_read_tokens", "cache_write_tokens", "credits")
SELECT "account_id", date_bin('15 minutes', "created_at", TIMESTAMPTZ '2000-01-01 00:00:00+00'), "key_id", "model", "route", count(*),
       coalesce(sum("input_tokens"), 0), coalesce(sum("output_tokens"), 0), coalesce(sum("cache_read_tokens"), 0),
       coalesce(sum("cache_write_tokens"), 0), coalesce(sum("credits"), 0)
FROM "usage_logs"
WHERE "status" <> 'refused'
GROUP BY 1, 2, 3, 4, 5;
