-- Dead letters: a receipt whose retry schedule (TALLY_RECEIPT_RETRY_SCHEDULE) ran out
-- is DEAD (dead_at set) and is no longer picked up until a person redelivers it.
ALTER TABLE "outbox" ADD COLUMN "dead_at" TIMESTAMPTZ(3);

-- The dashboard lists and counts a tenant's dead receipts, newest first.
CREATE INDEX "outbox_tenant_id_dead_at_idx" ON "outbox"("tenant_id", "dead_at") WHERE "dead_at" IS NOT NULL;
