-- AlterEnum
ALTER TYPE "CaseStatus" ADD VALUE 'PROPOSED';
ALTER TYPE "CaseStatus" ADD VALUE 'WAITING';
ALTER TYPE "CaseStatus" ADD VALUE 'ESCALATED';

-- CreateEnum
CREATE TYPE "CaseResolution" AS ENUM ('TIMING', 'ESCALATE', 'CORRECT');

-- CreateEnum
CREATE TYPE "ProposalStatus" AS ENUM ('PENDING', 'APPROVED', 'REJECTED', 'SUPERSEDED');

-- CreateEnum
CREATE TYPE "ApprovalDecision" AS ENUM ('APPROVE', 'REJECT');

-- AlterTable
ALTER TABLE "cases" ADD COLUMN     "waiting_since" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "case_proposals" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "case_id" BIGINT NOT NULL,
    "resolution" "CaseResolution" NOT NULL,
    "reason_code" TEXT,
    "reason" TEXT NOT NULL,
    "proposed_by_id" UUID NOT NULL,
    "proposed_by_label" TEXT NOT NULL,
    "proposed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "correction" JSONB,
    "amount" BIGINT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "required_approvals" INTEGER NOT NULL,
    "status" "ProposalStatus" NOT NULL DEFAULT 'PENDING',
    "decided_at" TIMESTAMPTZ(3),
    "posting_id" BIGINT,

    CONSTRAINT "case_proposals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "case_approvals" (
    "id" BIGSERIAL NOT NULL,
    "proposal_id" BIGINT NOT NULL,
    "proposer_id" UUID NOT NULL,
    "approver_id" UUID NOT NULL,
    "approver_label" TEXT NOT NULL,
    "decision" "ApprovalDecision" NOT NULL,
    "reason" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "case_approvals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "case_proposals_posting_id_key" ON "case_proposals"("posting_id");

-- CreateIndex
CREATE INDEX "case_proposals_case_id_idx" ON "case_proposals"("case_id");

-- CreateIndex
CREATE INDEX "case_proposals_tenant_id_status_idx" ON "case_proposals"("tenant_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "case_proposals_id_proposed_by_id_key" ON "case_proposals"("id", "proposed_by_id");

-- CreateIndex
CREATE UNIQUE INDEX "case_approvals_proposal_id_approver_id_key" ON "case_approvals"("proposal_id", "approver_id");

-- AddForeignKey
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_case_id_fkey" FOREIGN KEY ("case_id") REFERENCES "cases"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_proposed_by_id_fkey" FOREIGN KEY ("proposed_by_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_posting_id_fkey" FOREIGN KEY ("posting_id") REFERENCES "postings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "case_approvals" ADD CONSTRAINT "case_approvals_proposal_id_proposer_id_fkey" FOREIGN KEY ("proposal_id", "proposer_id") REFERENCES "case_proposals"("id", "proposed_by_id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "case_approvals" ADD CONSTRAINT "case_approvals_approver_id_fkey" FOREIGN KEY ("approver_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- ---------------------------------------------------------------------------
-- Four-eyes, held by the database even against code that forgot to check.
-- (New CaseStatus values cannot be used in the transaction that adds them,
-- hence status::text in the checks below.)
-- ---------------------------------------------------------------------------

-- Maker ≠ checker. The composite foreign key above proves proposer_id is the
-- proposal's real proposer; this refuses an approval by that same person.
ALTER TABLE "case_approvals" ADD CONSTRAINT "case_approvals_maker_is_not_checker" CHECK ("approver_id" <> "proposer_id");

ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_required_approvals" CHECK ("required_approvals" IN (1, 2));
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_amount_nonnegative" CHECK ("amount" >= 0);
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_currency_iso" CHECK ("currency" ~ '^[A-Z]{3}$');
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_has_reason" CHECK (length(btrim("reason")) > 0);
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_decided_has_time" CHECK (("status" = 'PENDING') = ("decided_at" IS NULL));
-- Only a correction carries a posting plan, and only an approved correction has posted it.
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_correction_plan" CHECK (("resolution" = 'CORRECT') = ("correction" IS NOT NULL));
ALTER TABLE "case_proposals" ADD CONSTRAINT "case_proposals_posting_when_approved" CHECK (("posting_id" IS NOT NULL) = ("resolution" = 'CORRECT' AND "status" = 'APPROVED'));
ALTER TABLE "cases" ADD CONSTRAINT "cases_waiting_has_time" CHECK (("status"::text = 'WAITING') = ("waiting_since" IS NOT NULL));

-- A proposal is evidence: what was proposed, by whom, never changes; only its
-- outcome is written, once, from PENDING. Nothing is deleted.
CREATE FUNCTION tally_guard_proposal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'case_proposals are kept: DELETE refused' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (NEW.id, NEW.tenant_id, NEW.case_id, NEW.resolution, NEW.reason_code, NEW.reason, NEW.proposed_by_id, NEW.proposed_by_label, NEW.proposed_at, NEW.correction, NEW.amount, NEW.currency, NEW.required_approvals)
     IS DISTINCT FROM
     (OLD.id, OLD.tenant_id, OLD.case_id, OLD.resolution, OLD.reason_code, OLD.reason, OLD.proposed_by_id, OLD.proposed_by_label, OLD.proposed_at, OLD.correction, OLD.amount, OLD.currency, OLD.required_approvals) THEN
    RAISE EXCEPTION 'case proposal %: what was proposed and by whom cannot change', OLD.id USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.status <> 'PENDING' THEN
    RAISE EXCEPTION 'case proposal % is already %', OLD.id, OLD.status USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER case_proposals_guard BEFORE UPDATE OR DELETE ON case_proposals
  FOR EACH ROW EXECUTE FUNCTION tally_guard_proposal();

-- Decisions are recorded on pending proposals only, and never changed.
CREATE FUNCTION tally_approval_needs_pending() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  current_status "ProposalStatus";
BEGIN
  SELECT status INTO current_status FROM case_proposals WHERE id = NEW.proposal_id;
  IF current_status IS DISTINCT FROM 'PENDING' THEN
    RAISE EXCEPTION 'case proposal % is not pending (%): no decision can be added', NEW.proposal_id, current_status USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER case_approvals_on_pending BEFORE INSERT ON case_approvals
  FOR EACH ROW EXECUTE FUNCTION tally_approval_needs_pending();
CREATE TRIGGER case_approvals_append_only BEFORE UPDATE OR DELETE ON case_approvals
  FOR EACH ROW EXECUTE FUNCTION tally_refuse_change();
