// Stripe's itemized balance report (balance_change_from_activity.itemized): one
// row per balance transaction. A charge is keyed by its payment intent, as the
// webhooks post it; a refund by its refund id; anything else (fees, payouts,
// disputes) is settled but not something a webhook posts: OTHER.
import { cell, currencyOf, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";

export const stripeReport: ReportParser = {
  format: "stripe",
  description: "Stripe's itemized balance report",
  required: ["balance_transaction_id", "currency", "gross", "reporting_category"],
  detect: (names) => names.has("balance_transaction_id") && names.has("reporting_category"),
  missing: (columns) => (columns.has("created_utc") || columns.has("created") ? null : "created_utc"),
  mapper(columns) {
    const created = columns.has("created_utc") ? "created_utc" : "created";
    return (row, fields, raw) => {
      const get = (name: string) => cell(columns, fields, name);
      if (!get("balance_transaction_id")) throw new ReportError(row, "balance_transaction_id", "empty");
      const currency = currencyOf(row, "currency", get("currency"));
      const amount = money(row, "gross", get("gross"), currency);
      const occurredAt = dateTime(row, created, get(created));
      const category = get("reporting_category");
      if (!category) throw new ReportError(row, "reporting_category", "empty");
      const kind = category === "charge" ? "PAYMENT" : category === "refund" ? "REFUND" : "OTHER";
      const reference =
        kind === "PAYMENT"
          ? get("payment_intent_id") || get("charge_id") || get("source_id")
          : kind === "REFUND"
            ? get("refund_id") || get("source_id")
            : get("source_id") || get("balance_transaction_id");
      if (!reference)
        throw new ReportError(
          row,
          kind === "REFUND" ? "refund_id" : "payment_intent_id",
          "no reference: payment_intent_id, charge_id/refund_id and source_id are all empty",
        );
      return { row, reference, kind, amount, currency, occurredAt, raw };
    };
  },
};
