-- Balance slots: a hot account's balance (a tenant's clearing:<provider>, moved by
-- every commit of that tenant and provider) is kept in several rows, summed on read,
-- so replicas committing at once each update their own row instead of queueing on
-- one row's lock until the other's commit has flushed. Other accounts use slot 0.
-- AlterTable
ALTER TABLE "balances" ADD COLUMN "slot" SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE "balances" DROP CONSTRAINT "balances_pkey";
ALTER TABLE "balances" ADD CONSTRAINT "balances_pkey" PRIMARY KEY ("account_id", "currency", "slot");
ALTER TABLE "balances" ADD CONSTRAINT "balances_slot_range" CHECK ("slot" >= 0 AND "slot" < 64);

-- Claim holder: the worker process holding a claim, as the key of the session
-- advisory lock that process keeps while it lives. A claim whose holder's lock is
-- gone (the process was killed) is taken over at once instead of after the sweep.
-- AlterTable
ALTER TABLE "processed_events" ADD COLUMN "claimed_by" INTEGER;

-- Every payment's commit wakes the refunds waiting for it (waiting_for = its reference):
-- without an index that was a scan of processed_events per payment, the commit
-- statement's CPU in a 4,000-payment drain. Few claims wait, so the index is partial.
-- CreateIndex
CREATE INDEX "processed_events_waiting_for_idx" ON "processed_events" ("tenant_id", "provider", "waiting_for") WHERE "waiting_for" IS NOT NULL;
