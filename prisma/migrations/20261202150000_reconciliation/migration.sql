-- CreateEnum
CREATE TYPE "ReconSource" AS ENUM ('API', 'CSV');

-- CreateEnum
CREATE TYPE "ReconRunStatus" AS ENUM ('RUNNING', 'DONE', 'FAILED');

-- CreateEnum
CREATE TYPE "DiscrepancyBucket" AS ENUM ('THEIRS_NOT_OURS', 'OURS_NOT_THEIRS', 'MISMATCH');

-- CreateEnum
CREATE TYPE "DiscrepancyState" AS ENUM ('OPEN', 'FETCHED', 'IN_FLIGHT', 'FETCH_FAILED', 'RESOLVED');

-- CreateEnum
CREATE TYPE "CaseKind" AS ENUM ('OURS_NOT_THEIRS', 'MISMATCH');

-- CreateEnum
CREATE TYPE "CaseStatus" AS ENUM ('OPEN', 'RESOLVED');

-- CreateTable
CREATE TABLE "recon_runs" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "window_from" TIMESTAMPTZ(3) NOT NULL,
    "window_to" TIMESTAMPTZ(3) NOT NULL,
    "source" "ReconSource" NOT NULL,
    "source_name" TEXT,
    "actor_type" "ActorType" NOT NULL,
    "actor_label" TEXT NOT NULL,
    "scheduled_for" DATE,
    "status" "ReconRunStatus" NOT NULL DEFAULT 'RUNNING',
    "error" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "duration_ms" INTEGER,
    "compared" INTEGER NOT NULL DEFAULT 0,
    "matched" INTEGER NOT NULL DEFAULT 0,
    "theirs_not_ours" INTEGER NOT NULL DEFAULT 0,
    "ours_not_theirs" INTEGER NOT NULL DEFAULT 0,
    "mismatched" INTEGER NOT NULL DEFAULT 0,
    "webhooks_received" INTEGER,
    "silence_alert" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "recon_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "recon_discrepancies" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "reference" TEXT NOT NULL,
    "bucket" "DiscrepancyBucket" NOT NULL,
    "state" "DiscrepancyState" NOT NULL DEFAULT 'OPEN',
    "day" DATE NOT NULL,
    "possible_timing" BOOLEAN NOT NULL DEFAULT false,
    "their_amount" BIGINT,
    "their_currency" CHAR(3),
    "their_line" JSONB,
    "our_amount" BIGINT,
    "our_currency" CHAR(3),
    "posting_id" BIGINT,
    "raw_event_id" BIGINT,
    "note" TEXT,
    "first_run_id" BIGINT NOT NULL,
    "last_run_id" BIGINT NOT NULL,
    "detected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "recon_discrepancies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "recon_run_items" (
    "run_id" BIGINT NOT NULL,
    "discrepancy_id" BIGINT NOT NULL,

    CONSTRAINT "recon_run_items_pkey" PRIMARY KEY ("run_id","discrepancy_id")
);

-- CreateTable
CREATE TABLE "recon_day_stats" (
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "day" DATE NOT NULL,
    "compared" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recon_day_stats_pkey" PRIMARY KEY ("tenant_id","provider","day")
);

-- CreateTable
CREATE TABLE "cases" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "discrepancy_id" BIGINT NOT NULL,
    "kind" "CaseKind" NOT NULL,
    "status" "CaseStatus" NOT NULL DEFAULT 'OPEN',
    "opened_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),
    "resolution" TEXT,

    CONSTRAINT "cases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alerts" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider",
    "kind" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "run_id" BIGINT,
    "raised_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cleared_at" TIMESTAMPTZ(3),

    CONSTRAINT "alerts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "recon_runs_tenant_id_provider_started_at_idx" ON "recon_runs"("tenant_id", "provider", "started_at");

-- CreateIndex
CREATE UNIQUE INDEX "recon_runs_tenant_id_provider_scheduled_for_key" ON "recon_runs"("tenant_id", "provider", "scheduled_for");

-- CreateIndex
CREATE INDEX "recon_discrepancies_tenant_id_day_idx" ON "recon_discrepancies"("tenant_id", "day");

-- CreateIndex
CREATE INDEX "recon_discrepancies_tenant_id_state_idx" ON "recon_discrepancies"("tenant_id", "state");

-- CreateIndex
CREATE UNIQUE INDEX "recon_discrepancies_tenant_id_provider_reference_bucket_key" ON "recon_discrepancies"("tenant_id", "provider", "reference", "bucket");

-- CreateIndex
CREATE INDEX "recon_run_items_discrepancy_id_idx" ON "recon_run_items"("discrepancy_id");

-- CreateIndex
CREATE UNIQUE INDEX "cases_discrepancy_id_key" ON "cases"("discrepancy_id");

-- CreateIndex
CREATE INDEX "cases_tenant_id_status_idx" ON "cases"("tenant_id", "status");

-- CreateIndex
CREATE INDEX "alerts_tenant_id_cleared_at_idx" ON "alerts"("tenant_id", "cleared_at");

-- AddForeignKey
ALTER TABLE "recon_runs" ADD CONSTRAINT "recon_runs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recon_discrepancies" ADD CONSTRAINT "recon_discrepancies_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recon_run_items" ADD CONSTRAINT "recon_run_items_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "recon_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recon_run_items" ADD CONSTRAINT "recon_run_items_discrepancy_id_fkey" FOREIGN KEY ("discrepancy_id") REFERENCES "recon_discrepancies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recon_day_stats" ADD CONSTRAINT "recon_day_stats_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cases" ADD CONSTRAINT "cases_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cases" ADD CONSTRAINT "cases_discrepancy_id_fkey" FOREIGN KEY ("discrepancy_id") REFERENCES "recon_discrepancies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A discrepancy states its evidence: the provider's side, ours, or both.
ALTER TABLE "recon_discrepancies" ADD CONSTRAINT "recon_discrepancies_has_a_side" CHECK ("their_amount" IS NOT NULL OR "our_amount" IS NOT NULL);
ALTER TABLE "recon_runs" ADD CONSTRAINT "recon_runs_window_order" CHECK ("window_from" < "window_to");
