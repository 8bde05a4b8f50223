-- CreateEnum
CREATE TYPE "Plan" AS ENUM ('free', 'basic', 'standard', 'pro', 'enterprise');

-- CreateEnum
CREATE TYPE "KeyType" AS ENUM ('master', 'proxy', 'dev');

-- CreateEnum
CREATE TYPE "SpendWindow" AS ENUM ('daily', 'weekly', 'monthly');

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "plan" "Plan" NOT NULL,
    "credits" DECIMAL(20,8) NOT NULL,
    "daily_limit" DECIMAL(20,8),
    "is_bootstrap" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "type" "KeyType" NOT NULL,
    "key_hash" TEXT NOT NULL,
    "masked_key" TEXT NOT NULL,
    "encrypted_key" TEXT,
    "name" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "allocated_amount" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "used_amount" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "spend_window" "SpendWindow",
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "model_whitelist" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "ip_whitelist" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "enabled_thinking" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_account_id_type_idx" ON "api_keys"("account_id", "type");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
