// Settlement report files: Stripe's itemized balance report, Adyen's Settlement
// Details Report, and Tally's own minimal format for any other provider. Each
// row becomes a SettlementLine or a ReportError naming the row and column.
import { toMinorUnits } from "@/lib/ledger/money";
import type { SettlementLine } from "@/lib/recon/types";

export type ReportFormat = "stripe" | "adyen" | "tally";

export class ReportError extends Error {
  constructor(readonly row: number, readonly column: string | null, message: string) {
    super(`row ${row}${column ? `, column "${column}"` : ""}: ${message}`);
  }
}

type Columns = Map<string, number>;
type Mapper = (row: number, fields: string[], raw: string) => SettlementLine;

const REQUIRED: Record<ReportFormat, string[]> = {
  stripe: ["balance_transaction_id", "currency", "gross", "reporting_category"],
  adyen: ["Psp Reference", "Merchant Reference", "Type", "Creation Date", "Gross Currency", "Gross Debit (GC)", "Gross Credit (GC)", "Batch Number"],
  tally: ["reference", "kind", "amount", "currency", "occurred_at"],
};

export function detectFormat(header: string[]): ReportFormat | null {
  const names = new Set(header.map((h) => h.trim()));
  if (names.has("balance_transaction_id") && names.has("reporting_category")) return "stripe";
  if (names.has("Psp Reference") && names.has("Batch Number")) return "adyen";
  if (names.has("reference") && names.has("kind") && names.has("occurred_at")) return "tally";
  return null;
}

function columnsOf(format: ReportFormat, header: string[]): Columns {
  const columns: Columns = new Map(header.map((h, i) => [h.trim(), i]));
  const missing = REQUIRED[format].filter((c) => !columns.has(c));
  if (format === "stripe" && !columns.has("created_utc") && !columns.has("created")) missing.push("created_utc");
  if (missing.length) throw new ReportError(1, missing[0]!, `missing column${missing.length > 1 ? "s" : ""} ${missing.map((m) => `"${m}"`).join(", ")} in the ${format} report header`);
  return columns;
}

const cell = (columns: Columns, fields: string[], name: string) => {
  const i = columns.get(name);
  return i === undefined ? "" : (fields[i] ?? "").trim();
};

function money(row: number, column: string, text: string, currency: string): bigint {
  const r = toMinorUnits(text === "" ? "0" : text, currency);
  if (!r.ok) throw new ReportError(row, column, r.error);
  return r.value;
}

/** "2026-12-01 10:00:00" (UTC unless an offset is given) or ISO 8601. */
function dateTime(row: number, column: string, text: string, offset = "Z"): Date {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  const date = m ? new Date(`${m[1]}T${m[2]}${m[3] ?? offset}`) : /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new ReportError(row, column, `not a date and time: "${text}"`);
  return date;
}

function currencyOf(row: number, column: string, text: string): string {
  if (!/^[A-Za-z]{3}$/.test(text)) throw new ReportError(row, column, `not a three-letter currency code: "${text}"`);
  return text.toUpperCase();
}

function stripeMapper(columns: Columns): Mapper {
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
    const reference = kind === "PAYMENT" ? get("payment_intent_id") || get("charge_id") || get("source_id") : kind === "REFUND" ? get("refund_id") || get("source_id") : get("source_id") || get("balance_transaction_id");
    if (!reference) throw new ReportError(row, kind === "REFUND" ? "refund_id" : "payment_intent_id", "no reference: payment_intent_id, charge_id/refund_id and source_id are all empty");
    return { row, reference, kind, amount, currency, occurredAt, raw };
  };
}

const ADYEN_ZONES: Record<string, string> = { UTC: "Z", GMT: "Z", CET: "+01:00", CEST: "+02:00", EET: "+02:00", EEST: "+03:00", WET: "Z", WEST: "+01:00" };

function adyenMapper(columns: Columns): Mapper {
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
}

function tallyMapper(columns: Columns): Mapper {
  return (row, fields, raw) => {
    const get = (name: string) => cell(columns, fields, name);
    const reference = get("reference");
    if (!reference) throw new ReportError(row, "reference", "empty");
    const kindText = get("kind").toUpperCase();
    if (!["PAYMENT", "REFUND", "OTHER"].includes(kindText)) throw new ReportError(row, "kind", `must be payment, refund or other, got "${get("kind")}"`);
    const currency = currencyOf(row, "currency", get("currency"));
    const magnitude = money(row, "amount", get("amount"), currency);
    const amount = kindText === "REFUND" && magnitude > 0n ? -magnitude : magnitude;
    return { row, reference, kind: kindText as SettlementLine["kind"], amount, currency, occurredAt: dateTime(row, "occurred_at", get("occurred_at")), raw };
  };
}

export function mapperFor(format: ReportFormat, header: string[]): Mapper {
  const columns = columnsOf(format, header);
  const width = header.length;
  const map = format === "stripe" ? stripeMapper(columns) : format === "adyen" ? adyenMapper(columns) : tallyMapper(columns);
  return (row, fields, raw) => {
    if (fields.length !== width) throw new ReportError(row, null, `has ${fields.length} fields, the header has ${width}`);
    return map(row, fields, raw);
  };
}
