// Adyen's Settlement Details Report: Settled and Refunded records are the
// movements webhooks post (a refund keyed by its Modification Reference, the
// refund's own pspReference); fees, chargebacks and payouts are OTHER.
import { cell, currencyOf, dateTime, money, ReportError, type ReportParser } from "@/lib/providers/report";

const ADYEN_ZONES: Record<string, string> = {
  UTC: "Z",
  GMT: "Z",
  CET: "+01:00",
  CEST: "+02:00",
  EET: "+02:00",
  EEST: "+03:00",
  WET: "Z",
  WEST: "+01:00",
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
      const offset = zone === "" ? "Z" : (ADYEN_ZONES[zone.toUpperCase()] ?? (/^[+-]\d{2}:?\d{2}$/.test(zone) ? zone : null));
      if (offset === null) throw new ReportError(row, "TimeZone", `unknown time zone "${zone}"`);
      const occurredAt = dateTime(row, "Creation Date", get("Creation Date"), offset);
      const currency = currencyOf(row, "Gross Currency", get("Gross Currency"));
      const credit = money(row, "Gross Credit (GC)", get("Gross Credit (GC)"), currency);
      const debit = money(row, "Gross Debit (GC)", get("Gross Debit (GC)"), currency);
      const settled = /^Settled(Bulk)?$/i.test(type);
      const refunded = /^Refunded(Bulk)?$/i.test(type);
      const kind = settled ? "PAYMENT" : refunded ? "REFUND" : "OTHER";
      // A refund's own pspReference is its Modification Reference; Psp Reference is the payment's.
      const reference = refunded ? get("Modification Reference") : get("Psp Reference");
      if (!reference) throw new ReportError(row, refunded ? "Modification Reference" : "Psp Reference", "empty");
      return { row, reference, kind, amount: credit - debit, currency, occurredAt, raw };
    };
  },
};
