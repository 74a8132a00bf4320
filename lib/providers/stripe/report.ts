// Stripe's itemized balance report (balance_change_from_activity.itemized.*): one row
// per balance transaction, matched by header name (versions add columns; any subset
// Stripe lets you run with works if it has the columns below).
//
// - Reference: a charge (and a partial_capture_reversal) by payment_intent_id, as the
//   webhooks post it, else charge_id for a charge made without an intent; a refund (and
//   a refund_failure) by source_id, the refund's id (the report has no refund_id).
//   Categories: ./categories.ts. A file without payment_intent_id is refused, naming
//   it: keyed by ch_… every charge would be one theirs-not-ours plus one ours-not-theirs.
// - Amount and currency: what the customer paid, the posting's: customer_facing_amount
//   and customer_facing_currency when the report has them (they differ from gross and
//   currency, the settlement's, for a charge settled in another currency), signed like
//   gross; else gross in currency. Major units, read at Stripe's precision (./amount.ts).
// - Fee: `fee` (a charge's processing fee, a dispute's fee), in the settlement currency;
//   posted as its own FEE movement (lib/recon/run.ts). Payout: `automatic_payout_id`
//   (the payout reconciliation report's column), the payout that paid the line out.
// - Time: created_utc. `created` is in the timezone the report was run with, which the
//   file does not say, so a file without created_utc is refused, naming it.
import { cell, currencyOf, dateTime, ReportError, type ReportParser } from "@/lib/providers/report";
import { fromStripeDecimal } from "@/lib/providers/stripe/amount";
import { stripeCategory } from "@/lib/providers/stripe/categories";

function amountOf(row: number, column: string, text: string, currency: string): bigint {
  const r = fromStripeDecimal(text === "" ? "0" : text, currency);
  if (!r.ok) throw new ReportError(row, column, r.error);
  return r.value;
}

export const stripeReport: ReportParser = {
  format: "stripe",
  description: "Stripe's itemized balance report",
  required: ["balance_transaction_id", "currency", "gross", "reporting_category", "source_id"],
  detect: (names) => names.has("balance_transaction_id") && names.has("reporting_category"),
  missing: (columns) =>
    !columns.has("created_utc") ? "created_utc" : !columns.has("payment_intent_id") ? "payment_intent_id" : null,
  mapper(columns) {
    const customerFacing = columns.has("customer_facing_amount") && columns.has("customer_facing_currency");
    return (row, fields, raw) => {
      const get = (name: string) => cell(columns, fields, name);
      if (!get("balance_transaction_id")) throw new ReportError(row, "balance_transaction_id", "empty");
      const categoryText = get("reporting_category");
      if (!categoryText) throw new ReportError(row, "reporting_category", "empty");
      const category = stripeCategory(categoryText);
      const settlementCurrency = currencyOf(row, "currency", get("currency"));
      const gross = amountOf(row, "gross", get("gross"), settlementCurrency);
      let amount = gross;
      let currency = settlementCurrency;
      if (customerFacing && category.kind !== "OTHER" && get("customer_facing_currency") !== "") {
        currency = currencyOf(row, "customer_facing_currency", get("customer_facing_currency"));
        const facing = amountOf(row, "customer_facing_amount", get("customer_facing_amount"), currency);
        // Signed like gross: the report's customer-facing amount is the movement's size.
        const size = facing < 0n ? -facing : facing;
        amount = gross < 0n ? -size : size;
      }
      const occurredAt = dateTime(row, "created_utc", get("created_utc"));
      const base =
        category.key === "payment"
          ? get("payment_intent_id") || get("charge_id") || get("source_id")
          : get("source_id") || get("balance_transaction_id");
      const reference = base && category.suffix ? `${base}${category.suffix}` : base;
      // The fee is in the settlement currency, like gross; a charge settled in another
      // currency than the customer's keeps its fee in the settlement's.
      const fee = columns.has("fee") ? amountOf(row, "fee", get("fee"), settlementCurrency) : 0n;
      const payout = get("automatic_payout_id") || (category.kind === "PAYOUT" ? base : "");
      if (!reference)
        throw new ReportError(
          row,
          category.key === "payment" ? "payment_intent_id" : "source_id",
          "no reference: payment_intent_id, charge_id and source_id are all empty",
        );
      return {
        row,
        reference,
        kind: category.kind,
        amount,
        currency,
        occurredAt,
        raw,
        lineId: get("balance_transaction_id"),
        ...(currency !== settlementCurrency && { settledGross: gross, settledCurrency: settlementCurrency }),
        ...(fee !== 0n && category.kind !== "OTHER" && { fee }),
        ...(payout && category.kind !== "OTHER" && { payout }),
        ...(category.notReconciled && { notReconciled: category.notReconciled }),
      };
    };
  },
};
