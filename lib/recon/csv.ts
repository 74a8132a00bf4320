// A streaming RFC 4180 reader: records come out one at a time, so a report of a
// million lines never sits in memory. Quoted fields may hold commas, quotes ("")
// and line breaks; CRLF and LF both end a record.
import type { Readable } from "node:stream";

export type CsvRecord = {
  /** 1-based record number; record 1 is the header. */
  row: number;
  fields: string[];
  /** The record's text as it appeared in the file (evidence for discrepancies). */
  raw: string;
};

export class CsvSyntaxError extends Error {
  constructor(readonly row: number, message: string) {
    super(`row ${row}: ${message}`);
  }
}

export async function* readCsv(input: Readable | AsyncIterable<string | Buffer>): AsyncGenerator<CsvRecord> {
  let row = 0;
  let fields: string[] = [];
  let field = "";
  let raw = "";
  let inQuotes = false;
  let quoteSeen = false; // the previous char closed a quote (or is the first of a "" pair)
  let fieldStarted = false;
  let pendingCR = false;
  const decoder = new TextDecoder("utf-8", { fatal: false });

  const endRecord = function* (): Generator<CsvRecord> {
    fields.push(field);
    row++;
    const record = { row, fields, raw };
    fields = [];
    field = "";
    raw = "";
    fieldStarted = false;
    quoteSeen = false;
    // A blank line is not a record.
    if (!(record.fields.length === 1 && record.fields[0] === "" && record.raw === "")) yield record;
    else row--;
  };

  for await (const chunk of input) {
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (row === 0 && raw === "" && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // UTF-8 BOM
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (pendingCR) {
        pendingCR = false;
        if (c === "\n") {
          start = i + 1;
          continue;
        }
      }
      if (inQuotes) {
        if (c === '"') {
          inQuotes = false;
          quoteSeen = true;
        } else field += c;
        continue;
      }
      if (c === '"') {
        if (quoteSeen) {
          // "" inside a quoted field: a literal quote, and the field goes on quoted.
          field += '"';
          inQuotes = true;
          quoteSeen = false;
        } else if (!fieldStarted) {
          inQuotes = true;
          fieldStarted = true;
        } else {
          throw new CsvSyntaxError(row + 1, `stray quote in an unquoted field after "${field.slice(-20)}"`);
        }
        continue;
      }
      if (c === ",") {
        fields.push(field);
        field = "";
        fieldStarted = false;
        quoteSeen = false;
        continue;
      }
      if (c === "\r" || c === "\n") {
        raw += text.slice(start, i);
        start = i + 1;
        if (c === "\r") pendingCR = true;
        yield* endRecord();
        continue;
      }
      if (quoteSeen) throw new CsvSyntaxError(row + 1, `unexpected text after a closing quote`);
      field += c;
      fieldStarted = true;
    }
    raw += text.slice(start);
  }
  if (inQuotes) throw new CsvSyntaxError(row + 1, "a quoted field is never closed");
  if (raw !== "" || fields.length > 0 || field !== "") yield* endRecord();
}
