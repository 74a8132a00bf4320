// Bank statements as CSV, in the bank's own layout: every bank exports its own
// columns, date format and decimal mark, so the layout is data (zod-validated),
// not code. Records are streamed by readCsv (csv-parse, lib/recon/csv.ts) with the
// layout's delimiter; columns are named by header or numbered from 1. A field the
// layout cannot read exactly (a date that is not in its format or not a day, an
// amount with a stray separator or more decimals than its currency has, an unknown
// currency) refuses the file naming row and column: a statement is imported whole
// or not at all.
import type { Readable } from "node:stream";
import { z } from "zod";
import { MAX_MINOR_UNITS, toMinorUnits } from "@/lib/ledger/money";
import { CsvSyntaxError, readCsv } from "@/lib/recon/csv";
import {
  calendarDay,
  currencyCode,
  MAX_LINE_TEXT,
  noteLine,
  StatementError,
  type StatementLine,
  type StatementMeta,
} from "@/lib/bank/statement-line";

export const DATE_FORMATS = ["YYYY-MM-DD", "DD.MM.YYYY", "DD/MM/YYYY", "MM/DD/YYYY"] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

/** A column by its header text, or by its position (1 = the first). */
const Column = z.union([z.string().trim().min(1).max(200), z.number().int().min(1).max(1000)]);
type ColumnRef = z.infer<typeof Column>;

export const CsvLayout = z
  .object({
    /** The statement's account, as people call it (the file does not say). */
    account: z.string().trim().min(1).max(200),
    delimiter: z.enum([",", ";", "\t", "|"]).default(","),
    /**
     * Records before the data, with numbered columns (the header and any preamble). With named columns the
     * header is found: the first record that has every named column; what comes before it is the bank's preamble.
     */
    skipRows: z.number().int().min(0).max(100).default(0),
    dateColumn: Column,
    dateFormat: z.enum(DATE_FORMATS),
    valueDateColumn: Column.optional(),
    /** Either one signed amount column, or a credit column and a debit column. */
    amountColumn: Column.optional(),
    creditColumn: Column.optional(),
    debitColumn: Column.optional(),
    decimalSeparator: z.enum([".", ","]).default("."),
    thousandsSeparator: z.enum(["", ",", ".", " ", "'"]).default(""),
    /** Either a currency column, or the one currency of the whole file. */
    currencyColumn: Column.optional(),
    currency: z
      .string()
      .trim()
      .refine((c) => currencyCode(c).ok, { message: "must be an ISO 4217 currency code such as EUR" })
      .transform((c) => c.toUpperCase())
      .optional(),
    /** Joined with spaces, in this order: where the provider's payout reference appears. */
    remittanceColumns: z.array(Column).max(20).default([]),
    referenceColumn: Column.optional(),
    counterpartyColumn: Column.optional(),
  })
  .strict()
  .superRefine((l, ctx) => {
    const split = l.creditColumn !== undefined || l.debitColumn !== undefined;
    if (l.amountColumn !== undefined && split)
      ctx.addIssue({
        code: "custom",
        path: ["amountColumn"],
        message: "give amountColumn or creditColumn and debitColumn, not both",
      });
    else if (l.amountColumn === undefined && (l.creditColumn === undefined || l.debitColumn === undefined))
      ctx.addIssue({
        code: "custom",
        path: [split ? (l.creditColumn === undefined ? "creditColumn" : "debitColumn") : "amountColumn"],
        message: "the amount needs amountColumn, or both creditColumn and debitColumn",
      });
    if ((l.currencyColumn === undefined) === (l.currency === undefined))
      ctx.addIssue({
        code: "custom",
        path: ["currency"],
        message: "give currencyColumn or a fixed currency, exactly one",
      });
    if (l.thousandsSeparator === l.decimalSeparator)
      ctx.addIssue({
        code: "custom",
        path: ["thousandsSeparator"],
        message: "the thousands separator cannot be the decimal separator",
      });
    if (l.skipRows > 0 && namedColumns(l).length)
      ctx.addIssue({
        code: "custom",
        path: ["skipRows"],
        message: "with named columns the header is found by its names; skipRows is for numbered columns",
      });
  });
export type CsvLayout = z.infer<typeof CsvLayout>;

/** The layout, or a message naming each field at fault. */
export function parseLayout(input: unknown): { ok: true; layout: CsvLayout } | { ok: false; message: string } {
  const r = CsvLayout.safeParse(input);
  if (r.success) return { ok: true, layout: r.data };
  return {
    ok: false,
    message: `The CSV layout is not valid: ${r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "layout"}: ${i.message}`).join("; ")}`,
  };
}

const DATE_PATTERNS: Record<DateFormat, { re: RegExp; order: [year: number, month: number, day: number] }> = {
  "YYYY-MM-DD": { re: /^(\d{4})-(\d{1,2})-(\d{1,2})$/, order: [1, 2, 3] },
  "DD.MM.YYYY": { re: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, order: [3, 2, 1] },
  "DD/MM/YYYY": { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: [3, 2, 1] },
  "MM/DD/YYYY": { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: [3, 1, 2] },
};

export function parseDay(text: string, format: DateFormat): string | null {
  const { re, order } = DATE_PATTERNS[format];
  const m = re.exec(text.trim());
  return m ? calendarDay(Number(m[order[0]]), Number(m[order[1]]), Number(m[order[2]])) : null;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A bank's amount text as a plain decimal ("-1.234,56" with "," and "." → "-1234.56").
 * A thousands separator is accepted only between groups of three digits, so
 * "1.2.3" is refused rather than read as 123.
 */
export function decimalOf(
  text: string,
  decimal: "." | ",",
  thousands: "" | "," | "." | " " | "'",
): { ok: true; decimal: string } | { ok: false; error: string } {
  let t = text.trim().replace(/\u2212/g, "-");
  if (thousands === " ") t = t.replace(/[\u00a0\u202f]/g, " ");
  let sign = "";
  if (/^[-+]/.test(t)) {
    sign = t[0] === "-" ? "-" : "";
    t = t.slice(1).trim();
  } else if (/-$/.test(t)) {
    // Some banks write the sign after the amount ("12,50-").
    sign = "-";
    t = t.slice(0, -1).trim();
  }
  const d = literal(decimal);
  const g = thousands ? literal(thousands) : null;
  const grouped = g ? new RegExp(`^\\d{1,3}(?:${g}\\d{3})+(?:${d}\\d+)?$`) : null;
  const plain = new RegExp(`^\\d+(?:${d}\\d+)?$`);
  const described = `decimal separator "${decimal}"${thousands ? `, thousands separator "${thousands === " " ? "space" : thousands}"` : ", no thousands separator"}`;
  if (!(plain.test(t) || grouped?.test(t)))
    return { ok: false, error: `${JSON.stringify(text)} is not an amount in this layout (${described})` };
  const digits = (g ? t.replace(new RegExp(g, "g"), "") : t).replace(decimal, ".");
  return { ok: true, decimal: sign + digits };
}

type Resolved = {
  date: number;
  valueDate: number | null;
  amount: number | null;
  credit: number | null;
  debit: number | null;
  currency: number | null;
  remittance: number[];
  reference: number | null;
  counterparty: number | null;
};

/** The columns a layout names by header text. */
function namedColumns(l: Pick<CsvLayout, "remittanceColumns"> & Record<string, unknown>): string[] {
  const refs = [
    ...Object.entries(l).flatMap(([key, value]) => (key.endsWith("Column") ? [value] : [])),
    ...l.remittanceColumns,
  ];
  return refs.filter((r): r is string => typeof r === "string");
}

/** How far into the file the header may be: bank preambles are a few lines. */
export const MAX_PREAMBLE_ROWS = 50;

const normal = (name: string) => name.trim().toLowerCase();

function resolveColumns(layout: CsvLayout, header: string[] | null, row: number): Resolved {
  const names = header?.map(normal) ?? [];
  const index = (ref: ColumnRef | undefined, field: string): number | null => {
    if (ref === undefined) return null;
    if (typeof ref === "number") return ref - 1;
    const found = names.flatMap((n, i) => (n === normal(ref) ? [i] : []));
    if (found.length === 1) return found[0]!;
    throw new StatementError(
      `row ${row}`,
      found.length
        ? `the header has ${found.length} columns named "${ref}" (${field}): name it by number instead`
        : `the header has no column "${ref}" (${field}); it has ${header!.map((h) => `"${h.trim()}"`).join(", ")}`,
    );
  };
  return {
    date: index(layout.dateColumn, "dateColumn")!,
    valueDate: index(layout.valueDateColumn, "valueDateColumn"),
    amount: index(layout.amountColumn, "amountColumn"),
    credit: index(layout.creditColumn, "creditColumn"),
    debit: index(layout.debitColumn, "debitColumn"),
    currency: index(layout.currencyColumn, "currencyColumn"),
    remittance: layout.remittanceColumns.map((c) => index(c, "remittanceColumns")!),
    reference: index(layout.referenceColumn, "referenceColumn"),
    counterparty: index(layout.counterpartyColumn, "counterpartyColumn"),
  };
}

/**
 * A statement's booked lines from a CSV in `layout`; every CSV line is booked
 * (banks export only those). Rows are counted as records, blank lines not
 * counted, as in settlement reports.
 */
export async function* readStatementCsv(
  input: Readable | AsyncIterable<string | Buffer>,
  layout: CsvLayout,
  meta: StatementMeta,
): AsyncGenerator<StatementLine> {
  const named = [...new Set(namedColumns(layout).map(normal))];
  let columns: Resolved | null = named.length ? null : resolveColumns(layout, null, 0);
  // The record most like the header, for the message when none has every named column.
  let likeliest: { row: number; fields: string[]; hits: number } | null = null;
  meta.accounts = [layout.account];
  const noHeader = () => {
    if (likeliest) resolveColumns(layout, likeliest.fields, likeliest.row);
    return new StatementError(
      "row 1",
      `no header: none of the first ${MAX_PREAMBLE_ROWS} rows has the columns ${named.map((n) => `"${n}"`).join(", ")}`,
    );
  };
  try {
    for await (const record of readCsv(input, { delimiter: layout.delimiter })) {
      if (columns === null) {
        const fields = record.fields.map(normal);
        const hits = named.filter((n) => fields.includes(n)).length;
        if (hits === named.length) columns = resolveColumns(layout, record.fields, record.row);
        else if (hits > (likeliest?.hits ?? 0)) likeliest = { row: record.row, fields: record.fields, hits };
        if (columns === null && record.row >= MAX_PREAMBLE_ROWS) throw noHeader();
        continue;
      }
      if (record.row <= layout.skipRows) continue;
      if (record.fields.every((f) => f.trim() === "")) continue;
      const line = readRecord(record.row, record.fields, columns, layout);
      noteLine(meta, line, false);
      yield line;
    }
  } catch (error) {
    if (error instanceof CsvSyntaxError)
      throw new StatementError(
        `row ${error.row}${error.column === null ? "" : `, column ${error.column}`}`,
        syntaxProblem(error),
      );
    throw error;
  }
  if (columns === null) throw noHeader();
}

const syntaxProblem = (error: CsvSyntaxError) => error.message.replace(/^[^:]*: /, "");

function readRecord(row: number, fields: string[], c: Resolved, layout: CsvLayout): StatementLine {
  const where = (i: number) => `row ${row}, column ${i + 1}`;
  const fail = (i: number, problem: string): never => {
    throw new StatementError(where(i), problem);
  };
  const field = (i: number): string => {
    if (i >= fields.length) fail(i, `the row has ${fields.length} columns; the layout reads column ${i + 1}`);
    return fields[i]!.trim();
  };
  const optional = (i: number | null) => (i === null ? null : field(i) || null);

  const bookingText = field(c.date);
  const bookingDate =
    parseDay(bookingText, layout.dateFormat) ??
    fail(c.date, `${JSON.stringify(bookingText)} is not a date in ${layout.dateFormat}`);
  const valueText = optional(c.valueDate);
  const valueDate =
    valueText === null
      ? null
      : (parseDay(valueText, layout.dateFormat) ??
        fail(c.valueDate!, `${JSON.stringify(valueText)} is not a date in ${layout.dateFormat}`));

  let currency = layout.currency ?? "";
  if (c.currency !== null) {
    const code = currencyCode(field(c.currency));
    if (!code.ok) fail(c.currency, code.error);
    currency = (code as { code: string }).code;
  }
  const minor = (i: number, negate: boolean): bigint => {
    const d = decimalOf(field(i), layout.decimalSeparator, layout.thousandsSeparator);
    if (!d.ok) return fail(i, d.error);
    const m = toMinorUnits(d.decimal, currency);
    if (!m.ok) return fail(i, m.error);
    const v = negate && m.value > 0n ? -m.value : m.value;
    if (v > MAX_MINOR_UNITS || -v > MAX_MINOR_UNITS)
      fail(
        i,
        `${field(i)} ${currency} is beyond the largest amount the ledger accepts (${MAX_MINOR_UNITS} minor units)`,
      );
    return v;
  };
  let amount: bigint;
  if (c.amount !== null) amount = minor(c.amount, false);
  else {
    const credit = field(c.credit!) ? minor(c.credit!, false) : null;
    const debit = field(c.debit!) ? minor(c.debit!, true) : null;
    if (credit !== null && debit !== null && credit !== 0n && debit !== 0n)
      fail(c.credit!, "the row has both a credit and a debit amount; a statement line is one or the other");
    if (credit === null && debit === null) fail(c.credit!, "the row has neither a credit nor a debit amount");
    if (credit !== null && credit < 0n)
      fail(c.credit!, `a credit column holds a negative amount (${field(c.credit!)})`);
    amount = credit && credit !== 0n ? credit : (debit ?? 0n);
  }
  const remittance = c.remittance
    .map((i) => field(i))
    .filter(Boolean)
    .join(" ");
  const counterparty = optional(c.counterparty);
  if (remittance.length + (counterparty?.length ?? 0) > MAX_LINE_TEXT)
    fail(c.remittance[0] ?? c.date, `the row carries more than ${MAX_LINE_TEXT} characters of text`);
  return {
    row,
    account: layout.account,
    entryRef: optional(c.reference),
    bookingDate,
    valueDate,
    amount,
    currency,
    remittance,
    counterparty,
    reversal: false,
  };
}
