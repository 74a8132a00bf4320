-- CreateEnum
CREATE TYPE "ConflictKind" AS ENUM ('DIFFERENT_RETRY', 'OVER_REFUND');

-- AlterEnum
ALTER TYPE "RawEventStatus" ADD VALUE 'CONFLICT';
ALTER TYPE "ClaimStatus" ADD VALUE 'HELD';
ALTER TYPE "CaseKind" ADD VALUE 'CONFLICT';

-- AlterTable
ALTER TABLE "raw_events" ADD COLUMN     "movement_references" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "processed_events" ADD COLUMN     "account" TEXT,
ADD COLUMN     "amount" BIGINT,
ADD COLUMN     "currency" CHAR(3),
ADD COLUMN     "movement_kind" "PostingKind",
ADD COLUMN     "payment_reference" TEXT,
ADD COLUMN     "provider_wait_since" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "cases" ADD COLUMN     "conflict_id" BIGINT,
ALTER COLUMN "discrepancy_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "claim_conflicts" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "kind" "ConflictKind" NOT NULL,
    "provider" "Provider" NOT NULL,
    "reference" TEXT NOT NULL,
    "processed_event_id" BIGINT NOT NULL,
    "raw_event_id" BIGINT NOT NULL,
    "claimed" JSONB NOT NULL,
    "delivered" JSONB NOT NULL,
    "delivered_key" TEXT NOT NULL,
    "detected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "claim_conflicts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "claim_conflicts_tenant_id_detected_at_idx" ON "claim_conflicts"("tenant_id", "detected_at");

-- CreateIndex
CREATE INDEX "claim_conflicts_raw_event_id_idx" ON "claim_conflicts"("raw_event_id");

-- CreateIndex
CREATE UNIQUE INDEX "claim_conflicts_processed_event_id_delivered_key_key" ON "claim_conflicts"("processed_event_id", "delivered_key");

-- CreateIndex
CREATE INDEX "raw_events_movement_references_idx" ON "raw_events" USING GIN ("movement_references");

-- CreateIndex
CREATE UNIQUE INDEX "cases_conflict_id_key" ON "cases"("conflict_id");

-- AddForeignKey
ALTER TABLE "cases" ADD CONSTRAINT "cases_conflict_id_fkey" FOREIGN KEY ("conflict_id") REFERENCES "claim_conflicts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_conflicts" ADD CONSTRAINT "claim_conflicts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_conflicts" ADD CONSTRAINT "claim_conflicts_processed_event_id_fkey" FOREIGN KEY ("processed_event_id") REFERENCES "processed_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_conflicts" ADD CONSTRAINT "claim_conflicts_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A case is about exactly one thing: a reconciliation discrepancy or a claim conflict.
ALTER TABLE "cases" ADD CONSTRAINT "cases_one_subject" CHECK (num_nonnulls("discrepancy_id", "conflict_id") = 1);
