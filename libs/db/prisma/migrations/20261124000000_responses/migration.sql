-- CreateTable
CREATE TABLE "stored_responses" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "response" JSONB NOT NULL,
    "input_items" JSONB NOT NULL,
    "item_ids" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "stored_responses_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "stored_responses_item_ids_idx" ON "stored_responses" USING GIN ("item_ids");

-- CreateIndex
CREATE INDEX "stored_responses_expires_at_idx" ON "stored_responses"("expires_at");
