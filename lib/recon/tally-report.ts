// Tally's own minimal report format, for providers with no report of their own:
// reference,kind,amount,currency,occurred_at. A refund's amount may be given
// positive; it is stored negative like every refund line.
import { cell, currencyOf, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";
import type { SettlementLine } from "@/lib/providers/types";

export const tallyReport: ReportParser = {
  format: "tally",
  description: "Tally's reference,kind,amount,currency,occurred_at",
  required: ["reference", "kind", "amount", "currency", "occurred_at"],
  detect: (names) => names.has("reference") && names.has("kind") && names.has("occurred_at"),
  mapper(columns) {
    return (row, fields, raw) => {
      const get = (name: string) => cell(columns, fields, name);
      const reference = get("reference");
      if (!reference) throw new ReportError(row, "reference", "empty");
      const kindText = get("kind").toUpperCase();
      if (!["PAYMENT", "REFUND", "OTHER"].includes(kindText))
        throw new ReportError(row, "kind", `must be payment, refund or other, got "${get("kind")}"`);
      const currency = currencyOf(row, "currency", get("currency"));
      const magnitude = money(row, "amount", get("amount"), currency);
      const amount = kindText === "REFUND" && magnitude > 0n ? -magnitude : magnitude;
      const occurredAt = dateTime(row, "occurred_at", get("occurred_at"));
      return { row, reference, kind: kindText as SettlementLine["kind"], amount, currency, occurredAt, raw };
    };
  },
};
