-- CreateTable
CREATE TABLE "conversations" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_items" (
    "seq" BIGSERIAL NOT NULL,
    "conversation_id" TEXT NOT NULL,
    "item_id" TEXT NOT NULL,
    "item" JSONB NOT NULL,

    CONSTRAINT "conversation_items_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE INDEX "conversations_account_id_idx" ON "conversations"("account_id");

-- CreateIndex
CREATE INDEX "conversations_expires_at_idx" ON "conversations"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "conversation_items_conversation_id_item_id_key" ON "conversation_items"("conversation_id", "item_id");

-- CreateIndex
CREATE INDEX "conversation_items_conversation_id_seq_idx" ON "conversation_items"("conversation_id", "seq");

-- AddForeignKey
ALTER TABLE "conversation_items" ADD CONSTRAINT "conversation_items_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
