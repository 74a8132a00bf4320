// Reads settlement report files with csv-parse, streaming: records come out one
// at a time, so a report of a million lines never sits in memory. Quoted fields
// may hold commas, quotes ("") and line breaks; CRLF and LF both end a record,
// mixed in one file too; a UTF-8 BOM is dropped; empty lines are skipped.
//
// Why a library and a record cap: the hand-written reader this replaces was
// quadratic on an unclosed quote (it re-scanned the growing record at every line:
// 220 KB took 4.7 s, 880 KB 58 s, freezing the web process). csv-parse is linear,
// and MAX_RECORD_CHARS refuses a record (an unclosed quote swallowing the file, a
// 5 MiB field) long before it grows: no settlement line comes near it.
// Every refusal names the row (1 = header) and the column (1-based).
import type { Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";

export type CsvRecord = {
  /** 1-based record number; record 1 is the header. */
  row: number;
  fields: string[];
  /** The record's text as it appeared in the file (evidence for discrepancies). */
  raw: string;
};

export class CsvSyntaxError extends Error {
  constructor(
    readonly row: number,
    readonly column: number | null,
    message: string,
  ) {
    super(`row ${row}${column === null ? "" : `, column ${column}`}: ${message}`);
  }
}

/** Longest record accepted, in characters. Stripe's and Adyen's lines are a few hundred. */
export const MAX_RECORD_CHARS = 64 * 1024;

const MESSAGES: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: "a quoted field is never closed",
  CSV_INVALID_CLOSING_QUOTE: "unexpected text after a closing quote",
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: "unexpected text after a closing quote",
  INVALID_OPENING_QUOTE: "stray quote in an unquoted field",
  CSV_MAX_RECORD_SIZE: `the record is longer than ${MAX_RECORD_CHARS} characters (an unclosed quote, or not a settlement report)`,
};

function syntaxError(error: CsvError): CsvSyntaxError {
  // csv-parse counts the records it has emitted; the one at fault is the next.
  const info = error as CsvError & { records?: number; index?: number };
  const row = (info.records ?? 0) + 1;
  const column = typeof info.index === "number" ? info.index + 1 : null;
  return new CsvSyntaxError(row, column, MESSAGES[error.code] ?? error.message);
}

/** csv-parse's raw text carries the line breaks around the record; the evidence is the record alone. */
const recordText = (raw: string) => raw.replace(/^[\r\n]+/, "").replace(/[\r\n]+$/, "");

type Parsed = { record: string[]; raw: string };

export async function* readCsv(
  input: Readable | AsyncIterable<string | Buffer>,
  o: { delimiter?: string } = {},
): AsyncGenerator<CsvRecord> {
  const parser = parse({
    bom: true,
    // Bank statements are often ";"-separated (with "," as their decimal mark); settlement reports are ",".
    delimiter: o.delimiter ?? ",",
    raw: true,
    // Not info: true: it builds an object per record and made a file of 2-byte rows 4x slower.
    relax_quotes: false,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: ["\r\n", "\n"],
    max_record_size: MAX_RECORD_CHARS,
  });
  parser.on("error", () => undefined); // read from parser.errored below, where the row is known
  // Driven by hand rather than by async iteration: write() parses a chunk synchronously
  // and read() hands its records over at once; iterating the object stream cost a promise
  // per record, 5x the parse itself on a file of tiny rows.
  let row = 0;
  const take = (): CsvRecord[] => {
    const failure = parser.errored;
    if (failure) throw failure instanceof CsvError ? syntaxError(failure) : failure;
    const records: CsvRecord[] = [];
    for (let out = parser.read() as Parsed | null; out !== null; out = parser.read() as Parsed | null) {
      row++; // empty lines are skipped, so this is csv-parse's own record count
      const nul = out.record.findIndex((f) => f.includes("\u0000"));
      // PostgreSQL text cannot hold NUL, and no report has one: a binary file, refused here by position.
      if (nul !== -1) throw new CsvSyntaxError(row, nul + 1, "contains a NUL byte (is this a binary file?)");
      records.push({ row, fields: out.record, raw: recordText(out.raw) });
    }
    return records;
  };
  try {
    for await (const chunk of input) {
      parser.write(chunk);
      yield* take();
    }
    await new Promise<void>((resolve) => {
      parser.once("finish", resolve);
      parser.once("close", resolve);
      parser.end();
    });
    yield* take();
    const failure = parser.errored;
    if (failure) throw failure instanceof CsvError ? syntaxError(failure) : failure;
  } finally {
    parser.destroy();
  }
}
