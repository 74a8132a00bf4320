-- Bank statements matched to payouts (#20.4): an import is a reconciliation run
-- per provider (source BANK), so it is listed with the other runs, with its counts
-- and the matching rules it used, and its discrepancies have a run to belong to.
ALTER TYPE "ReconSource" ADD VALUE 'BANK';

-- What an import read but did not book (camt.053 entries pending or for
-- information only): counted on the statement, never silently dropped.
ALTER TABLE "bank_statements" ADD COLUMN "skipped_entries" INTEGER NOT NULL DEFAULT 0;

-- A reversal (camt.053 RvslInd) moves money back; it is never a provider's payout.
-- match_note says why a line is not matched (two payouts fit it) or how it was
-- (the rule behind a within-tolerance match, and the difference), so nothing is silent.
ALTER TABLE "bank_lines" ADD COLUMN "reversal" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "match_note" TEXT;
ALTER TABLE "bank_lines" ADD CONSTRAINT "bank_lines_match_rule" CHECK ("match_rule" IN ('reference', 'amount_date', 'reference_sum', 'amount_date_sum', 'within_tolerance'));
ALTER TABLE "bank_lines" ADD CONSTRAINT "bank_lines_matched" CHECK (("matched_at" IS NULL) = ("match_rule" IS NULL));

-- The matcher's pool: a tenant's credits no payout has claimed yet, by booking day.
CREATE INDEX "bank_lines_unmatched_credits" ON "bank_lines" ("tenant_id", "booking_date") WHERE "matched_at" IS NULL AND "amount" > 0;
