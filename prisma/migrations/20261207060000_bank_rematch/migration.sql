-- Bank matching without an import (#20.4): a payout posted after the statement that
-- shows its credit used to wait for the next import to be matched, and one due at the
-- bank stayed unflagged until then. The worker's scheduler matches again when a
-- payout in transit changed after this mark (lib/bank/rematch.ts); every matching sets
-- it (lib/bank/match.ts markMatched). NULL: never matched.
ALTER TABLE "tenants" ADD COLUMN "bank_matched_through" TIMESTAMPTZ(3);
