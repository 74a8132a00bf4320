-- Cases an accountant can run a close with (#20.8): a due date for every case
-- from the SLA of its kind, and manual links of records (N settlement lines to
-- one posting) decided with four eyes.

-- AlterEnum: a link is a fourth way to resolve a case. A value added here cannot
-- be used in this transaction, hence resolution::text in the checks below.
ALTER TYPE "CaseResolution" ADD VALUE 'LINK';

-- ---------------------------------------------------------------------------
-- SLA: days to resolve a case, per kind.
--
-- The due date is written once, when the case opens, by a trigger, rather than
-- computed on read: a deadline is a commitment made when the case opened, so a
-- later change of TALLY_CASE_SLA_DAYS must not move the deadlines of cases
-- already open; cases are opened by raw SQL in several places (reconciliation,
-- the claim's conflicts, payouts and bank matching), and every one of them gets
-- its due date without knowing SLAs exist; and "overdue" is then one comparison
-- on a column, the same in the list, its counts and the export.
-- The table holds the configuration's values: lib/cases/sla.ts writes it from
-- TALLY_CASE_SLA_DAYS when the database is prepared (migrations, npm start);
-- the rows below are the defaults until then.
-- ---------------------------------------------------------------------------

-- CreateTable
CREATE TABLE "case_sla" (
    "kind" "CaseKind" NOT NULL,
    "days" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "case_sla_pkey" PRIMARY KEY ("kind"),
    CONSTRAINT "case_sla_days_range" CHECK ("days" BETWEEN 1 AND 365)
);

INSERT INTO "case_sla" ("kind", "days") VALUES
  ('OURS_NOT_THEIRS', 5), ('MISMATCH', 5), ('CONFLICT', 2), ('PAYOUT_RESIDUAL', 3), ('BANK_UNMATCHED', 3);

-- Whole days of 24 hours, not calendar days in the session's time zone: a due date
-- does not move by an hour because a DST change falls inside it.
CREATE FUNCTION tally_case_due_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.due_at IS NULL THEN
    SELECT NEW.opened_at + make_interval(hours => 24 * s.days) INTO NEW.due_at FROM case_sla s WHERE s.kind = NEW.kind;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER cases_due_at BEFORE INSERT ON cases
  FOR EACH ROW EXECUTE FUNCTION tally_case_due_at();

-- Cases opened before due dates existed: due as if they had had one.
UPDATE "cases" c SET "due_at" = c."opened_at" + make_interval(hours => 24 * s."days")
  FROM "case_sla" s WHERE s."kind" = c."kind" AND c."due_at" IS NULL;

-- A snooze always says why; unsnoozing clears both.
ALTER TABLE "cases" ADD CONSTRAINT "cases_snooze_has_reason" CHECK (("snoozed_until" IS NULL) = ("snooze_reason" IS NULL));
ALTER TABLE "cases" ADD CONSTRAINT "cases_snooze_reason_not_blank" CHECK ("snooze_reason" IS NULL OR length(btrim("snooze_reason")) > 0);

-- ---------------------------------------------------------------------------
-- Manual links: a LINK proposal says "these settlement lines (discrepancies)
-- together are that posting", one row per line. The rows are written with their
-- proposal and never change; the link holds once the proposal is APPROVED, by a
-- different accountant (case_approvals: maker ≠ checker, as for every proposal).
-- Every key carries tenant_id (Citus-ready), so the targets get (tenant_id, id) keys.
-- ---------------------------------------------------------------------------

-- CreateTable
CREATE TABLE "case_links" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "proposal_id" BIGINT NOT NULL,
    "posting_id" BIGINT NOT NULL,
    "discrepancy_id" BIGINT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" CHAR(3) NOT NULL,

    CONSTRAINT "case_links_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "case_links_amount_nonzero" CHECK ("amount" <> 0),
    CONSTRAINT "case_links_currency_iso" CHECK ("currency" ~ '^[A-Z]{3}$')
);

-- CreateIndex
CREATE UNIQUE INDEX "case_links_tenant_id_proposal_id_discrepancy_id_key" ON "case_links"("tenant_id", "proposal_id", "discrepancy_id");
CREATE INDEX "case_links_tenant_id_discrepancy_id_idx" ON "case_links"("tenant_id", "discrepancy_id");
CREATE INDEX "case_links_tenant_id_posting_id_idx" ON "case_links"("tenant_id", "posting_id");
CREATE UNIQUE INDEX "case_proposals_tenant_id_id_key" ON "case_proposals"("tenant_id", "id");
CREATE UNIQUE INDEX "postings_tenant_id_id_key" ON "postings"("tenant_id", "id");
CREATE UNIQUE INDEX "recon_discrepancies_tenant_id_id_key" ON "recon_discrepancies"("tenant_id", "id");

-- AddForeignKey
ALTER TABLE "case_links" ADD CONSTRAINT "case_links_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "case_links" ADD CONSTRAINT "case_links_tenant_id_proposal_id_fkey" FOREIGN KEY ("tenant_id", "proposal_id") REFERENCES "case_proposals"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;
ALTER TABLE "case_links" ADD CONSTRAINT "case_links_tenant_id_posting_id_fkey" FOREIGN KEY ("tenant_id", "posting_id") REFERENCES "postings"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;
ALTER TABLE "case_links" ADD CONSTRAINT "case_links_tenant_id_discrepancy_id_fkey" FOREIGN KEY ("tenant_id", "discrepancy_id") REFERENCES "recon_discrepancies"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

CREATE TRIGGER case_links_append_only BEFORE UPDATE OR DELETE ON case_links
  FOR EACH ROW EXECUTE FUNCTION tally_refuse_change();

-- What the checker approves is what was proposed: link rows are written only by
-- the transaction that wrote their proposal (a PENDING proposal's row is never
-- updated, so its xmin is that transaction), never added to it later.
CREATE FUNCTION tally_link_with_its_proposal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p record;
BEGIN
  SELECT resolution::text AS resolution, status::text AS status, xmin = pg_current_xact_id()::xid AS ours
    INTO p FROM case_proposals WHERE id = NEW.proposal_id AND tenant_id = NEW.tenant_id;
  IF p.resolution IS DISTINCT FROM 'LINK' OR p.status IS DISTINCT FROM 'PENDING' OR NOT p.ours THEN
    RAISE EXCEPTION 'case link refused: proposal % is not a link proposed in this transaction', NEW.proposal_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_with_their_proposal';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER case_links_with_their_proposal BEFORE INSERT ON case_links
  FOR EACH ROW EXECUTE FUNCTION tally_link_with_its_proposal();

-- At COMMIT of any transaction that writes a LINK proposal: it has records, all
-- naming one posting (the case's own) in one currency. Once APPROVED: every line
-- is RESOLVED, still carries the amount that was linked, is of the posting's
-- provider and is linked by no other approved proposal; the lines sum to the
-- posting's own movement on the provider's clearing account, read from the ledger
-- here (its own legs, not the reference's net: a fee posted under the same
-- reference is not part of the payment the lines split); and the case is RESOLVED. Deferred, like the other four-eyes
-- checks, so the order of the statements in decideProposal does not matter.
CREATE FUNCTION tally_check_link_proposal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p case_proposals%ROWTYPE;
  n integer;
  postings_named integer;
  currencies integer;
  link_posting bigint;
  link_currency text;
  total numeric;
  posted postings%ROWTYPE;
  ours numeric;
  bad bigint;
  case_status text;
  case_posting bigint;
BEGIN
  SELECT * INTO p FROM case_proposals WHERE id = NEW.id;
  IF NOT FOUND OR p.resolution::text <> 'LINK' THEN
    RETURN NULL;
  END IF;
  SELECT count(*), count(DISTINCT posting_id), count(DISTINCT currency), min(posting_id), min(currency), sum(amount)
    INTO n, postings_named, currencies, link_posting, link_currency, total
    FROM case_links WHERE tenant_id = p.tenant_id AND proposal_id = p.id;
  IF n = 0 OR postings_named <> 1 OR currencies <> 1 THEN
    RAISE EXCEPTION 'link proposal % must name one posting and at least one line in one currency (% lines, % postings, % currencies)', p.id, n, postings_named, currencies
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_one_posting';
  END IF;
  SELECT c.status::text, d.posting_id INTO case_status, case_posting
    FROM cases c LEFT JOIN recon_discrepancies d ON d.id = c.discrepancy_id WHERE c.id = p.case_id;
  IF case_posting IS DISTINCT FROM link_posting THEN
    RAISE EXCEPTION 'link proposal % names posting %, not its case''s posting %', p.id, link_posting, case_posting
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_one_posting';
  END IF;
  IF p.status::text <> 'APPROVED' THEN
    RETURN NULL;
  END IF;
  SELECT * INTO posted FROM postings WHERE id = link_posting;
  SELECT l.discrepancy_id INTO bad FROM case_links l JOIN recon_discrepancies d ON d.id = l.discrepancy_id
    WHERE l.tenant_id = p.tenant_id AND l.proposal_id = p.id
      AND (d.state::text <> 'RESOLVED' OR d.their_amount IS DISTINCT FROM l.amount OR d.their_currency IS DISTINCT FROM l.currency
           OR d.provider IS DISTINCT FROM posted.provider
           OR EXISTS (SELECT 1 FROM case_links o JOIN case_proposals op ON op.id = o.proposal_id
                      WHERE o.tenant_id = l.tenant_id AND o.discrepancy_id = l.discrepancy_id AND o.proposal_id <> p.id AND op.status::text = 'APPROVED'))
    LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'link proposal % is APPROVED but line % is not resolved by it as linked', p.id, bad
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_lines_as_linked';
  END IF;
  SELECT coalesce(sum(e.amount), 0) INTO ours
    FROM ledger_entries e JOIN accounts a ON a.id = e.account_id AND a.kind = 'PROVIDER_CLEARING'
    WHERE e.posting_id = link_posting AND e.currency = link_currency;
  IF ours <> total THEN
    RAISE EXCEPTION 'link proposal % is APPROVED but its lines sum to % %, and posting % is %', p.id, total, link_currency, link_posting, ours
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_sum_to_the_posting';
  END IF;
  IF case_status <> 'RESOLVED' THEN
    RAISE EXCEPTION 'link proposal % is APPROVED but case % is %', p.id, p.case_id, case_status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_links_resolve_the_case';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER case_proposals_link_guard AFTER INSERT OR UPDATE ON case_proposals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tally_check_link_proposal();
