-- Requests refused because a key's budget window was spent are logged (status `refused`, nothing
-- charged), naming the window (`<period>@<timezone>`, or the allocation's spend window).
ALTER TYPE "UsageStatus" ADD VALUE IF NOT EXISTS 'refused';
ALTER TABLE "usage_logs" ADD COLUMN "refused_by" TEXT;
