// Adyen's Settlement Details Report, matched by header name: Settled and Refunded
// records are the movements webhooks post (a refund keyed by its Modification
// Reference, the refund's own pspReference); RefundedReversed nets its refund back
// to zero (a refund that did not reach the shopper is a mismatch) and is listed as
// not reconciled, like every other record about money that is not a payment or a
// refund (Fee, Chargeback, DepositCorrection, InvoiceDeduction, MiscCosts…);
// MerchantPayout is money leaving for the bank and only kept. Chargeback and
// SecondChargeback are a dispute's withdrawals, ChargebackReversed its reinstatement,
// keyed by the dispute's pspReference (the Modification Reference; Psp Reference is the
// disputed payment's) as ./parse.ts keys CHARGEBACK, SECOND_CHARGEBACK (":second") and
// CHARGEBACK_REVERSED (":reinstated"). A record's commission, markup, scheme fees and
// interchange (net currency) are its fee, posted from the report like Stripe's. Records that are not
// about one payment have an empty Psp Reference in Adyen's own reports, and often
// only net columns: they are read from Net Currency / Net Debit / Net Credit then.
// Creation Date is in the zone named by TimeZone, an abbreviation (./timezones.ts).
import { cell, currencyOf, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";
import { adyenZoneOffset, knownAdyenZones } from "@/lib/providers/adyen/timezones";

const PAYOUTS = /^(MerchantPayout|Balancetransfer)$/i;
const FEE_COLUMNS = ["Commission (NC)", "Markup (NC)", "Scheme Fees (NC)", "Interchange (NC)"] as const;

/**
 * What Adyen kept for a record: its commission, markup, scheme fees and interchange, in
 * the net currency (positive when charged), and the record's gross on that side (its
 * net plus those fees), for a record settled in another currency than the shopper's.
 * Null when the report has no net currency for it or kept nothing.
 */
function feesOf(row: number, get: (name: string) => string): { fee: bigint; gross: bigint; currency: string } | null {
  const nc = get("Net Currency");
  if (nc === "") return null;
  const currency = currencyOf(row, "Net Currency", nc);
  let fee = 0n;
  for (const column of FEE_COLUMNS) fee += money(row, column, get(column), currency);
  if (fee === 0n) return null;
  const net =
    money(row, "Net Credit (NC)", get("Net Credit (NC)"), currency) -
    money(row, "Net Debit (NC)", get("Net Debit (NC)"), currency);
  return { fee, gross: net + fee, currency };
}
const DISPUTES: Record<string, { kind: "DISPUTE" | "DISPUTE_REVERSAL"; suffix: string }> = {
  chargeback: { kind: "DISPUTE", suffix: "" },
  secondchargeback: { kind: "DISPUTE", suffix: ":second" },
  chargebackreversed: { kind: "DISPUTE_REVERSAL", suffix: ":reinstated" },
};

export const adyenReport: ReportParser = {
  format: "adyen",
  description: "Adyen's Settlement Details Report",
  required: [
    "Psp Reference",
    "Merchant Reference",
    "Type",
    "Creation Date",
    "Gross Currency",
    "Gross Debit (GC)",
    "Gross Credit (GC)",
    "Batch Number",
  ],
  detect: (names) => names.has("Psp Reference") && names.has("Batch Number"),
  mapper(columns) {
    return (row, fields, raw) => {
      const get = (name: string) => cell(columns, fields, name);
      const type = get("Type");
      if (!type) throw new ReportError(row, "Type", "empty");
      const zone = get("TimeZone");
      const offset = zone === "" ? "Z" : adyenZoneOffset(zone);
      if (offset === null)
        throw new ReportError(
          row,
          "TimeZone",
          `unknown time zone "${zone}" (known: ${knownAdyenZones()}, or an offset like +01:00)`,
        );
      const occurredAt = dateTime(row, "Creation Date", get("Creation Date"), offset);
      const settled = /^Settled(Bulk)?$/i.test(type);
      const refunded = /^Refunded(Bulk)?$/i.test(type);
      const refundReversed = /^RefundedReversed$/i.test(type);
      const dispute = DISPUTES[type.toLowerCase()];
      const kind = settled ? "PAYMENT" : refunded || refundReversed ? "REFUND" : dispute ? dispute.kind : "OTHER";
      // Payments and refunds are in the shopper's (gross) currency, the posting's; a record
      // with no gross side (fees, payouts, corrections) is read from its net columns.
      const side = kind === "OTHER" && get("Gross Currency") === "" && get("Net Currency") !== "" ? "NC" : "GC";
      const currencyColumn = side === "GC" ? "Gross Currency" : "Net Currency";
      const currency = currencyOf(row, currencyColumn, get(currencyColumn));
      const credit = money(
        row,
        side === "GC" ? "Gross Credit (GC)" : "Net Credit (NC)",
        get(side === "GC" ? "Gross Credit (GC)" : "Net Credit (NC)"),
        currency,
      );
      const debit = money(
        row,
        side === "GC" ? "Gross Debit (GC)" : "Net Debit (NC)",
        get(side === "GC" ? "Gross Debit (GC)" : "Net Debit (NC)"),
        currency,
      );
      // A refund's own pspReference is its Modification Reference; Psp Reference is the payment's.
      const reference =
        kind === "PAYMENT"
          ? get("Psp Reference")
          : kind === "REFUND"
            ? get("Modification Reference")
            : dispute
              ? get("Modification Reference") && `${get("Modification Reference")}${dispute.suffix}`
              : get("Psp Reference") || get("Modification Reference") || `${type} row ${row}`;
      if (!reference)
        throw new ReportError(row, kind === "REFUND" || dispute ? "Modification Reference" : "Psp Reference", "empty");
      const notReconciled = refundReversed || (kind === "OTHER" && !PAYOUTS.test(type)) ? type : undefined;
      const settledSide = kind === "OTHER" ? null : feesOf(row, get);
      return {
        row,
        reference,
        kind,
        amount: credit - debit,
        currency,
        occurredAt,
        raw,
        ...(settledSide?.fee && { fee: settledSide.fee }),
        ...(settledSide?.fee &&
          settledSide.currency !== currency && {
            settledGross: settledSide.gross,
            settledCurrency: settledSide.currency,
          }),
        ...(notReconciled && { notReconciled }),
      };
    };
  },
};
