-- Four eyes on settlement postings from an uploaded report (#20, security). A run
-- whose report came in over HTTP (a person's session or an API token) no longer
-- stores its settlement movements (fees, disputes, adjustments, settlement-only
-- payouts) as raw events at once: it holds them here, with what they total, until a
-- second person approves (lib/recon/settlement-approval.ts). The rules below hold
-- against code that forgot them: the decider is never the person who started the
-- run, a decided row never changes, and what was held is never rewritten.
CREATE TABLE "recon_settlement_approvals" (
    "tenant_id" UUID NOT NULL,
    "run_id" BIGINT NOT NULL,
    "started_by_id" UUID,
    "started_by_label" TEXT NOT NULL,
    "held_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fees" INTEGER NOT NULL,
    "others" INTEGER NOT NULL,
    "totals" JSONB NOT NULL,
    "status" "ProposalStatus" NOT NULL DEFAULT 'PENDING',
    "decided_by_id" UUID,
    "decided_by_label" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "reason" TEXT,
    "posted" INTEGER,

    CONSTRAINT "recon_settlement_approvals_pkey" PRIMARY KEY ("tenant_id","run_id")
);

CREATE TABLE "recon_held_movements" (
    "tenant_id" UUID NOT NULL,
    "run_id" BIGINT NOT NULL,
    "reference" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "body" BYTEA NOT NULL,
    "marks_discrepancy" BOOLEAN NOT NULL,

    CONSTRAINT "recon_held_movements_pkey" PRIMARY KEY ("tenant_id","run_id","reference")
);

CREATE INDEX "recon_settlement_approvals_status_idx" ON "recon_settlement_approvals"("status");

-- Keys carry tenant_id (prisma/tenant-keys.test.ts): the run is referenced by (tenant_id, id).
CREATE UNIQUE INDEX "recon_runs_tenant_id_id_key" ON "recon_runs"("tenant_id", "id");

ALTER TABLE "recon_settlement_approvals" ADD CONSTRAINT "recon_settlement_approvals_tenant_id_run_id_fkey" FOREIGN KEY ("tenant_id", "run_id") REFERENCES "recon_runs"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "recon_held_movements" ADD CONSTRAINT "recon_held_movements_tenant_id_run_id_fkey" FOREIGN KEY ("tenant_id", "run_id") REFERENCES "recon_settlement_approvals"("tenant_id", "run_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Maker ≠ checker (NULL started_by_id: a token started it, no person to compare with).
ALTER TABLE "recon_settlement_approvals" ADD CONSTRAINT "recon_settlement_approvals_maker_is_not_checker" CHECK ("decided_by_id" <> "started_by_id");
-- A decision says who, when and why; a pending row has none of them.
ALTER TABLE "recon_settlement_approvals" ADD CONSTRAINT "recon_settlement_approvals_decided" CHECK (
  "status" IN ('PENDING', 'APPROVED', 'REJECTED')
  AND ("status" = 'PENDING') = ("decided_at" IS NULL)
  AND ("status" = 'PENDING' OR ("decided_by_id" IS NOT NULL AND "decided_by_label" IS NOT NULL AND length(btrim("reason")) >= 3))
  AND ("status" = 'APPROVED') = ("posted" IS NOT NULL));

CREATE FUNCTION tally_settlement_approval_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.status <> 'PENDING' THEN
    RAISE EXCEPTION 'run %''s settlement approval is % and cannot be changed', OLD.run_id, OLD.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'recon_settlement_approvals_final';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER recon_settlement_approvals_final BEFORE UPDATE OR DELETE ON "recon_settlement_approvals"
  FOR EACH ROW EXECUTE FUNCTION tally_settlement_approval_final();

-- What was held is what gets approved: never rewritten, never added to once decided.
CREATE FUNCTION tally_held_movement_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' OR EXISTS (SELECT 1 FROM recon_settlement_approvals WHERE run_id = NEW.run_id AND status <> 'PENDING') THEN
    RAISE EXCEPTION 'run %''s held settlement movements cannot be changed', NEW.run_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'recon_held_movements_fixed';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER recon_held_movements_fixed BEFORE INSERT OR UPDATE ON "recon_held_movements"
  FOR EACH ROW EXECUTE FUNCTION tally_held_movement_fixed();
