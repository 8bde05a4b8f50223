-- Input tokens read from and written to the provider's prompt cache, priced apart from the rest of
-- the input. Both are part of `input_tokens`; null where the request reported no cache usage (and
-- on every row written before this migration).
ALTER TABLE "usage_logs" ADD COLUMN "cache_read_tokens" INTEGER;
ALTER TABLE "usage_logs" ADD COLUMN "cache_write_tokens" INTEGER;
