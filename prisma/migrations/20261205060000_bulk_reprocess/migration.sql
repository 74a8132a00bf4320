-- Bulk reprocessing jobs: which events one audited request sent back through the
-- normal path, and from which state, so progress and cancel read them.
-- CreateEnum
CREATE TYPE "BulkJobState" AS ENUM ('RUNNING', 'DONE', 'CANCELLED');

-- CreateTable
CREATE TABLE "bulk_reprocess_jobs" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "filter" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "actor_type" "ActorType" NOT NULL,
    "actor_label" TEXT NOT NULL,
    "requested" INTEGER NOT NULL,
    "state" "BulkJobState" NOT NULL DEFAULT 'RUNNING',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "cancelled_by" TEXT,
    "cancelled_returned" INTEGER,

    CONSTRAINT "bulk_reprocess_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bulk_reprocess_items" (
    "job_id" BIGINT NOT NULL,
    "raw_event_id" BIGINT NOT NULL,
    "from_status" "RawEventStatus" NOT NULL,
    "from_error" TEXT,

    CONSTRAINT "bulk_reprocess_items_pkey" PRIMARY KEY ("job_id","raw_event_id")
);

-- CreateIndex
CREATE INDEX "bulk_reprocess_jobs_tenant_id_created_at_idx" ON "bulk_reprocess_jobs"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "bulk_reprocess_items_raw_event_id_idx" ON "bulk_reprocess_items"("raw_event_id");

-- AddForeignKey
ALTER TABLE "bulk_reprocess_jobs" ADD CONSTRAINT "bulk_reprocess_jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bulk_reprocess_items" ADD CONSTRAINT "bulk_reprocess_items_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "bulk_reprocess_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bulk_reprocess_items" ADD CONSTRAINT "bulk_reprocess_items_raw_event_id_fkey" FOREIGN KEY ("raw_event_id") REFERENCES "raw_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
