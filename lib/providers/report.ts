// Settlement report files, the part every format shares: a report parser names
// the columns it needs and how to tell its header, and maps each row to a
// SettlementLine or a ReportError naming the row and column. The formats live
// with their provider (lib/providers/<name>/report.ts); Tally's own minimal
// format for any other provider is lib/recon/tally-report.ts.
import { toMinorUnits } from "@/lib/ledger/money";
import type { SettlementLine } from "@/lib/providers/types";

export class ReportError extends Error {
  constructor(
    readonly row: number,
    readonly column: string | null,
    message: string,
  ) {
    super(`row ${row}${column ? `, column "${column}"` : ""}: ${message}`);
  }
}

export type Columns = Map<string, number>;
export type Mapper = (row: number, fields: string[], raw: string) => SettlementLine;

export interface ReportParser {
  /** The format's name, as `--format` and the upload's `format=` take it. */
  readonly format: string;
  /** What the format is, for the message refusing an unrecognised file. */
  readonly description: string;
  readonly required: readonly string[];
  /** Whether a header row is this format's (checked before `required`, so a near-miss is named). */
  detect(names: ReadonlySet<string>): boolean;
  /** Columns the format needs beyond `required`, with the one to name when missing; null when complete. */
  missing?(columns: Columns): string | null;
  mapper(columns: Columns): Mapper;
}

export function columnsOf(parser: ReportParser, header: string[]): Columns {
  const columns: Columns = new Map(header.map((h, i) => [h.trim(), i]));
  const missing = parser.required.filter((c) => !columns.has(c));
  const extra = parser.missing?.(columns);
  if (extra) missing.push(extra);
  if (missing.length)
    throw new ReportError(
      1,
      missing[0]!,
      `missing column${missing.length > 1 ? "s" : ""} ${missing.map((m) => `"${m}"`).join(", ")} in the ${parser.format} report header`,
    );
  return columns;
}

export const cell = (columns: Columns, fields: string[], name: string) => {
  const i = columns.get(name);
  return i === undefined ? "" : (fields[i] ?? "").trim();
};

export function money(row: number, column: string, text: string, currency: string): bigint {
  const r = toMinorUnits(text === "" ? "0" : text, currency);
  if (!r.ok) throw new ReportError(row, column, r.error);
  return r.value;
}

/** "2026-12-01 10:00:00" (UTC unless an offset is given) or ISO 8601. */
export function dateTime(row: number, column: string, text: string, offset = "Z"): Date {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  const date = m
    ? new Date(`${m[1]}T${m[2]}${m[3] ?? offset}`)
    : /^\d+$/.test(text)
      ? new Date(Number(text) * 1000)
      : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new ReportError(row, column, `not a date and time: "${text}"`);
  return date;
}

export function currencyOf(row: number, column: string, text: string): string {
  if (!/^[A-Za-z]{3}$/.test(text)) throw new ReportError(row, column, `not a three-letter currency code: "${text}"`);
  return text.toUpperCase();
}

/** The parser's row mapper, refusing rows whose width differs from the header's. */
export function mapperFor(parser: ReportParser, header: string[]): Mapper {
  const map = parser.mapper(columnsOf(parser, header));
  const width = header.length;
  return (row, fields, raw) => {
    if (fields.length !== width)
      throw new ReportError(row, null, `has ${fields.length} fields, the header has ${width}`);
    return map(row, fields, raw);
  };
}
