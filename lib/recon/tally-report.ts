// Tally's own minimal report format, for providers with no report of their own:
// reference,kind,amount,currency,occurred_at. Amounts are MAJOR units written with
// exactly the currency's ISO 4217 decimals ("10.50" EUR, "1500" JPY, "1.250" KWD),
// like the providers' own reports; anything else is refused, so a file written in
// minor units ("1050" EUR) cannot be read as a hundred times the money. A refund's
// amount may be given positive; it is stored negative like every refund line.
import { cell, currencyOf, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";
import type { SettlementLine } from "@/lib/providers/types";
import { currencyExponent } from "@/lib/ledger/money";

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
      const text = get("amount");
      const exponent = currencyExponent(currency);
      const decimals = /^-?\d+(?:\.(\d*))?$/.exec(text)?.[1]?.length ?? 0;
      if (/^-?\d+(\.\d*)?$/.test(text) && decimals !== exponent)
        throw new ReportError(
          row,
          "amount",
          `"${text}" ${currency}: Tally's format is major units with exactly ${exponent} decimal${exponent === 1 ? "" : "s"} for ${currency} (${exponent === 0 ? "1500" : `12.${"5".padEnd(exponent, "0")}`})${decimals === 0 ? "; this looks like minor units" : ""}`,
        );
      const magnitude = money(row, "amount", text, currency);
      const amount = kindText === "REFUND" && magnitude > 0n ? -magnitude : magnitude;
      const occurredAt = dateTime(row, "occurred_at", get("occurred_at"));
      return { row, reference, kind: kindText as SettlementLine["kind"], amount, currency, occurredAt, raw };
    };
  },
};
