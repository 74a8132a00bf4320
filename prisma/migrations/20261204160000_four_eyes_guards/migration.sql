-- ---------------------------------------------------------------------------
-- Four-eyes, the rest of it held by the database (#16.5): before this, direct
-- SQL could set a proposal APPROVED (and its case WAITING) with no approval
-- rows, and an approved correction's posting_id could name any posting.
--
-- Constraint triggers, DEFERRABLE INITIALLY DEFERRED: the app writes the last
-- approval, the correction posting, the case's state and the proposal's status
-- in one transaction (lib/cases/cases.ts, decideProposal), so each rule is
-- checked at COMMIT against what that transaction leaves, whatever its order.
-- ---------------------------------------------------------------------------

-- An APPROVED proposal has required_approvals APPROVE rows. They are distinct
-- people (unique (proposal_id, approver_id)), none of them the proposer (CHECK
-- case_approvals_maker_is_not_checker); approval rows cannot be deleted or
-- added after the decision, so a count that holds at commit holds for good.
-- Its posting, if any, is that case's correction exactly as approved: a
-- CORRECTION posting of the same tenant, with the case's provider and
-- reference, reversing the planned posting, with the planned legs and no other.
CREATE FUNCTION tally_check_approved_proposal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p case_proposals%ROWTYPE;
  approvals integer;
  d recon_discrepancies%ROWTYPE;
  posted postings%ROWTYPE;
  posted_legs text[];
  planned_legs text[];
BEGIN
  -- The row as the transaction leaves it, not as this event saw it.
  SELECT * INTO p FROM case_proposals WHERE id = NEW.id;
  IF NOT FOUND OR p.status::text <> 'APPROVED' THEN
    RETURN NULL;
  END IF;
  SELECT count(*) INTO approvals FROM case_approvals WHERE proposal_id = p.id AND decision = 'APPROVE';
  IF approvals < p.required_approvals THEN
    RAISE EXCEPTION 'case proposal % is APPROVED with % of its % required approvals', p.id, approvals, p.required_approvals
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_proposals_approved_has_approvals';
  END IF;
  IF p.posting_id IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT dd.* INTO d FROM cases c JOIN recon_discrepancies dd ON dd.id = c.discrepancy_id WHERE c.id = p.case_id;
  SELECT * INTO posted FROM postings WHERE id = p.posting_id;
  SELECT coalesce(array_agg(format('%s|%s|%s', account_id, amount, currency) ORDER BY 1), '{}') INTO posted_legs
    FROM ledger_entries WHERE posting_id = p.posting_id;
  SELECT coalesce(array_agg(format('%s|%s|%s', leg->>'accountId', leg->>'amount', leg->>'currency') ORDER BY 1), '{}') INTO planned_legs
    FROM jsonb_array_elements(p.correction->'legs') leg;
  IF posted.kind::text <> 'CORRECTION'
     OR posted.tenant_id <> p.tenant_id
     OR posted.provider IS DISTINCT FROM d.provider
     OR posted.provider_reference IS DISTINCT FROM d.reference
     OR posted.reverses_posting_id IS DISTINCT FROM (p.correction->>'reversesPostingId')::bigint
     OR posted_legs <> planned_legs THEN
    RAISE EXCEPTION 'case proposal % names posting %, which is not the correction it approved for case %', p.id, p.posting_id, p.case_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'case_proposals_posting_is_the_correction';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER case_proposals_approved_guard AFTER INSERT OR UPDATE ON case_proposals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tally_check_approved_proposal();

-- A case's decided states come only from a decided proposal:
--   PROPOSED  has a PENDING proposal;
--   WAITING   is entered from PROPOSED, with the case's latest proposal an approved TIMING;
--   ESCALATED is entered only with an approved ESCALATE proposal on the case.
-- (OPEN and RESOLVED are also written by reconciliation runs, which decide from the provider's report.)
CREATE FUNCTION tally_check_case_state() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  previous text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.status::text END;
  latest case_proposals%ROWTYPE;
BEGIN
  IF NEW.status::text IS NOT DISTINCT FROM previous THEN
    RETURN NULL;
  END IF;
  SELECT * INTO latest FROM case_proposals WHERE case_id = NEW.id ORDER BY id DESC LIMIT 1;
  IF NEW.status::text = 'PROPOSED' AND NOT EXISTS (SELECT 1 FROM case_proposals WHERE case_id = NEW.id AND status = 'PENDING') THEN
    RAISE EXCEPTION 'case % is PROPOSED without a pending proposal', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'cases_state_from_a_decision';
  END IF;
  IF NEW.status::text = 'WAITING' AND (previous IS DISTINCT FROM 'PROPOSED' OR latest.status IS DISTINCT FROM 'APPROVED' OR latest.resolution IS DISTINCT FROM 'TIMING') THEN
    RAISE EXCEPTION 'case % can wait only when its proposal of timing is approved', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'cases_state_from_a_decision';
  END IF;
  IF NEW.status::text = 'ESCALATED' AND NOT EXISTS (SELECT 1 FROM case_proposals WHERE case_id = NEW.id AND status = 'APPROVED' AND resolution = 'ESCALATE') THEN
    RAISE EXCEPTION 'case % can be escalated only by an approved proposal to escalate', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'cases_state_from_a_decision';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER cases_state_guard AFTER INSERT OR UPDATE OF status ON cases
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tally_check_case_state();
