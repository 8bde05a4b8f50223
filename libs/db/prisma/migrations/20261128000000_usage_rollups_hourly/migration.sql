-- Usage per UTC hour, account, key, model and route: the same sums as usage_rollups (its four
-- quarter hours added up), written by metering-service in the same statement. A usage series reads
-- an hour from here when the hour lies whole inside one local hour or day of the reporting time zone
-- (every hour of a zone with a whole-hour offset; all but the hours a local midnight cuts in
-- Asia/Kolkata), and the quarter hours of usage_rollups only for the hours a local boundary cuts.
CREATE TABLE "usage_rollups_hourly" (
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

    CONSTRAINT "usage_rollups_hourly_pkey" PRIMARY KEY ("account_id","bucket","key_id","model","route")
);

-- Per-key reads (a proxy or DevPass key's own series).
CREATE INDEX "usage_rollups_hourly_key_id_bucket_idx" ON "usage_rollups_hourly"("key_id", "bucket");

-- Backfill from the quarter-hour rollups.
INSERT INTO "usage_rollups_hourly" ("account_id", "bucket", "key_id", "model", "route", "requests", "input_tokens", "output_tokens",
                                    "cache_read_tokens", "cache_write_tokens", "credits")
SELECT "account_id", date_bin('1 hour', "bucket", TIMESTAMPTZ '2000-01-01 00:00:00+00'), "key_id", "model", "route", sum("requests"),
       sum("input_tokens"), sum("output_tokens"), sum("cache_read_tokens"), sum("cache_write_tokens"), sum("credits")
FROM "usage_rollups"
GROUP BY 1, 2, 3, 4, 5;
