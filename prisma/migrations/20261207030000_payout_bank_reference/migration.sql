-- A payout's bank reference (#20.4): the text the provider says its transfer carries
-- to the bank (Adyen's MerchantPayout Modification Reference, "TX… batch 7, <merchant
-- account>"), which our key "<merchant account>:batch:<n>:<currency>" never is. The
-- bank step looks for either in a credit's remittance, so two payouts of one amount on
-- one day are told apart by what the bank shows, not left ambiguous.
ALTER TABLE "payouts" ADD COLUMN "bank_reference" TEXT;
