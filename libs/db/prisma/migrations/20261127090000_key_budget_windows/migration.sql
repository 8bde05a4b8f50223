-- A proxy key's budget windows beyond its allocation: [{"period", "timezone", "amount"}], amount a
-- decimal string (libs/billing budget-windows.ts). Their spend is read from usage_logs.
ALTER TABLE "api_keys" ADD COLUMN "budgets" JSONB NOT NULL DEFAULT '[]';
