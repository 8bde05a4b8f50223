-- Credits in 12 decimal places: a price of 0.042 per million tokens is 0.000000042 per token,
-- and every charge must be exact.
ALTER TABLE "accounts" ALTER COLUMN "credits" SET DATA TYPE DECIMAL(24,12);
ALTER TABLE "accounts" ALTER COLUMN "daily_limit" SET DATA TYPE DECIMAL(24,12);
ALTER TABLE "api_keys" ALTER COLUMN "allocated_amount" SET DATA TYPE DECIMAL(24,12);
ALTER TABLE "api_keys" ALTER COLUMN "used_amount" SET DATA TYPE DECIMAL(24,12);

-- AlterTable: the start of the spend window `used_amount` counts in (null: lifetime).
ALTER TABLE "api_keys" ADD COLUMN "window_started_at" TIMESTAMPTZ(3);

-- CreateEnum
CREATE TYPE "UsageStatus" AS ENUM ('success', 'cancelled', 'error');

-- CreateTable
CREATE TABLE "usage_logs" (
    "request_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "key_type" "KeyType" NOT NULL,
    "masked_key" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "status" "UsageStatus" NOT NULL,
    "input_tokens" INTEGER,
    "output_tokens" INTEGER,
    "credits" DECIMAL(24,12) NOT NULL,
    "ip" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_logs_pkey" PRIMARY KEY ("request_id")
);

-- CreateTable
CREATE TABLE "daily_usage" (
    "account_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "route" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "input_tokens" BIGINT NOT NULL DEFAULT 0,
    "output_tokens" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "daily_usage_pkey" PRIMARY KEY ("account_id","day","route")
);

-- CreateIndex
CREATE INDEX "usage_logs_account_id_created_at_request_id_idx" ON "usage_logs"("account_id", "created_at" DESC, "request_id" DESC);

-- CreateIndex
CREATE INDEX "usage_logs_key_id_created_at_request_id_idx" ON "usage_logs"("key_id", "created_at" DESC, "request_id" DESC);
