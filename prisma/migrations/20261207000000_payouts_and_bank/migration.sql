-- Reconciliation to the payout (#20): the money movements beyond payments and
-- refunds, the provider's settlement lines kept per payout, the payouts themselves,
-- bank statements, matching rules per endpoint, a cause on every discrepancy, and
-- what an accountant needs to run a close with cases (assignee, due date, snooze).

-- AlterEnum
ALTER TYPE "PostingKind" ADD VALUE 'FEE';
ALTER TYPE "PostingKind" ADD VALUE 'DISPUTE';
ALTER TYPE "PostingKind" ADD VALUE 'DISPUTE_REVERSAL';
ALTER TYPE "PostingKind" ADD VALUE 'ADJUSTMENT';
ALTER TYPE "PostingKind" ADD VALUE 'PAYOUT';
ALTER TYPE "PostingKind" ADD VALUE 'PAYOUT_FAILED';

ALTER TYPE "AccountKind" ADD VALUE 'FEES';
ALTER TYPE "AccountKind" ADD VALUE 'DISPUTES';
ALTER TYPE "AccountKind" ADD VALUE 'ADJUSTMENTS';
ALTER TYPE "AccountKind" ADD VALUE 'BANK';

ALTER TYPE "EventSource" ADD VALUE 'SETTLEMENT';

ALTER TYPE "DiscrepancyBucket" ADD VALUE 'WITHIN_TOLERANCE';
ALTER TYPE "DiscrepancyBucket" ADD VALUE 'PAYOUT_RESIDUAL';
ALTER TYPE "DiscrepancyBucket" ADD VALUE 'BANK_UNMATCHED';

ALTER TYPE "CaseKind" ADD VALUE 'PAYOUT_RESIDUAL';
ALTER TYPE "CaseKind" ADD VALUE 'BANK_UNMATCHED';

-- CreateEnum
CREATE TYPE "DiscrepancyCause" AS ENUM ('NEVER_DELIVERED', 'SIGNATURE_REFUSED', 'PARSE_FAILED', 'CONFLICT', 'LATE', 'MISSING_AT_PROVIDER', 'AMOUNT_DIFFERS', 'FEE', 'PAYOUT_RESIDUAL', 'BANK');

-- CreateEnum
CREATE TYPE "PayoutStatus" AS ENUM ('IN_TRANSIT', 'SETTLED', 'FAILED');

-- AlterTable: the cause, derived for rows found before causes existed.
ALTER TABLE "recon_discrepancies" ADD COLUMN "cause" "DiscrepancyCause";
UPDATE "recon_discrepancies" SET "cause" = CASE
  WHEN "bucket" = 'THEIRS_NOT_OURS' THEN 'NEVER_DELIVERED'::"DiscrepancyCause"
  WHEN "bucket" = 'OURS_NOT_THEIRS' AND "possible_timing" THEN 'LATE'::"DiscrepancyCause"
  WHEN "bucket" = 'OURS_NOT_THEIRS' THEN 'MISSING_AT_PROVIDER'::"DiscrepancyCause"
  ELSE 'AMOUNT_DIFFERS'::"DiscrepancyCause" END;
ALTER TABLE "recon_discrepancies" ALTER COLUMN "cause" SET NOT NULL;

-- AlterTable: matching rules per endpoint.
ALTER TABLE "provider_endpoints" ADD COLUMN "match_tolerance_minor" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "match_date_lag_days" INTEGER NOT NULL DEFAULT 3,
ADD COLUMN "match_priority" TEXT[] DEFAULT ARRAY['reference', 'amount_date']::TEXT[];
ALTER TABLE "provider_endpoints" ADD CONSTRAINT "provider_endpoints_match_rules" CHECK ("match_tolerance_minor" >= 0 AND "match_date_lag_days" >= 0 AND "match_date_lag_days" <= 60);

-- AlterTable: what each run did beyond the buckets, and the rules it ran with.
ALTER TABLE "recon_runs" ADD COLUMN "within_tolerance" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "fees_posted" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "payouts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "rules" JSONB NOT NULL DEFAULT '{}';

-- AlterTable: cases an accountant can run a close with.
ALTER TABLE "cases" ADD COLUMN "assignee_id" UUID,
ADD COLUMN "due_at" TIMESTAMPTZ(3),
ADD COLUMN "snoozed_until" TIMESTAMPTZ(3),
ADD COLUMN "snooze_reason" TEXT;

-- CreateTable
CREATE TABLE "payouts" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "reference" TEXT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "our_amount" BIGINT,
    "their_amount" BIGINT,
    "destination" TEXT,
    "arrival_date" DATE,
    "status" "PayoutStatus" NOT NULL DEFAULT 'IN_TRANSIT',
    "posting_id" BIGINT,
    "bank_line_id" BIGINT,
    "settled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payouts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payouts_amounts_positive" CHECK (("our_amount" IS NULL OR "our_amount" > 0) AND ("their_amount" IS NULL OR "their_amount" > 0))
);

-- CreateTable
CREATE TABLE "payout_lines" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" "Provider" NOT NULL,
    "payout_reference" TEXT NOT NULL,
    "line_id" TEXT NOT NULL,
    "reference" TEXT NOT NULL,
    "kind" "PostingKind" NOT NULL,
    "gross" BIGINT NOT NULL,
    "fee" BIGINT NOT NULL DEFAULT 0,
    "currency" CHAR(3) NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "run_id" BIGINT NOT NULL,
    "row_no" INTEGER NOT NULL,
    "raw" TEXT NOT NULL,

    CONSTRAINT "payout_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bank_statements" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "format" TEXT NOT NULL,
    "source_name" TEXT,
    "account" TEXT NOT NULL,
    "currency" CHAR(3),
    "from_date" DATE,
    "to_date" DATE,
    "lines" INTEGER NOT NULL DEFAULT 0,
    "sha256" TEXT NOT NULL,
    "actor_type" "ActorType" NOT NULL,
    "actor_label" TEXT NOT NULL,
    "imported_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_statements_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bank_lines" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "statement_id" BIGINT NOT NULL,
    "row_no" INTEGER NOT NULL,
    "account" TEXT NOT NULL,
    "entry_ref" TEXT,
    "booking_date" DATE NOT NULL,
    "value_date" DATE,
    "amount" BIGINT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "remittance" TEXT NOT NULL DEFAULT '',
    "counterparty" TEXT,
    "matched_at" TIMESTAMPTZ(3),
    "match_rule" TEXT,

    CONSTRAINT "bank_lines_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "payouts_tenant_id_provider_reference_key" ON "payouts"("tenant_id", "provider", "reference");
CREATE INDEX "payouts_tenant_id_status_idx" ON "payouts"("tenant_id", "status");
CREATE INDEX "payouts_tenant_id_bank_line_id_idx" ON "payouts"("tenant_id", "bank_line_id");
CREATE UNIQUE INDEX "payout_lines_tenant_id_provider_line_id_key" ON "payout_lines"("tenant_id", "provider", "line_id");
CREATE INDEX "payout_lines_tenant_id_provider_payout_reference_idx" ON "payout_lines"("tenant_id", "provider", "payout_reference");
CREATE UNIQUE INDEX "bank_statements_tenant_id_sha256_key" ON "bank_statements"("tenant_id", "sha256");
CREATE UNIQUE INDEX "bank_lines_tenant_id_statement_id_row_no_key" ON "bank_lines"("tenant_id", "statement_id", "row_no");
CREATE INDEX "bank_lines_tenant_id_booking_date_idx" ON "bank_lines"("tenant_id", "booking_date");
CREATE INDEX "cases_tenant_id_assignee_id_idx" ON "cases"("tenant_id", "assignee_id");

-- AddForeignKey
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payout_lines" ADD CONSTRAINT "payout_lines_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bank_statements" ADD CONSTRAINT "bank_statements_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bank_lines" ADD CONSTRAINT "bank_lines_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bank_lines" ADD CONSTRAINT "bank_lines_statement_id_fkey" FOREIGN KEY ("statement_id") REFERENCES "bank_statements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "cases" ADD CONSTRAINT "cases_assignee_id_fkey" FOREIGN KEY ("assignee_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
