// A streaming RFC 4180 reader: records come out one at a time, so a report of a
// million lines never sits in memory. Quoted fields may hold commas, quotes ("")
// and line breaks; CRLF and LF both end a record. Lines without a quote (nearly
// all of them in settlement reports) take a fast path: a plain split.
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

const countQuotes = (s: string) => {
  let n = 0;
  for (let i = s.indexOf('"'); i !== -1; i = s.indexOf('"', i + 1)) n++;
  return n;
};

/** Splits one complete record that contains quotes. */
function splitQuoted(record: string, row: number): string[] {
  const fields: string[] = [];
  let i = 0;
  while (true) {
    if (record[i] === '"') {
      let value = "";
      let j = i + 1;
      while (true) {
        const q = record.indexOf('"', j);
        if (q === -1) throw new CsvSyntaxError(row, "a quoted field is never closed");
        value += record.slice(j, q);
        if (record[q + 1] === '"') {
          value += '"';
          j = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      if (i === record.length) return fields;
      if (record[i] !== ",") throw new CsvSyntaxError(row, `unexpected text after a closing quote: "${record.slice(i, i + 20)}"`);
      i++;
    } else {
      const comma = record.indexOf(",", i);
      const value = comma === -1 ? record.slice(i) : record.slice(i, comma);
      if (value.includes('"')) throw new CsvSyntaxError(row, `stray quote in an unquoted field "${value.slice(0, 20)}"`);
      fields.push(value);
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}

export async function* readCsv(input: Readable | AsyncIterable<string | Buffer>): AsyncGenerator<CsvRecord> {
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let row = 0;
  let first = true;
  // A record whose quotes are still open at the end of a line continues on the next.
  let pending: string | null = null;

  const take = (line: string): CsvRecord | null => {
    const record: string = pending === null ? line : `${pending}\n${line}`;
    if (record.indexOf('"') === -1) {
      pending = null;
      if (record === "") return null;
      return { row: ++row, fields: record.split(","), raw: record };
    }
    if (countQuotes(record) % 2 === 1) {
      pending = record;
      return null;
    }
    pending = null;
    row++;
    return { row, fields: splitQuoted(record, row), raw: record };
  };

  for await (const chunk of input) {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (first && buffer.length > 0) {
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1); // UTF-8 BOM
      first = false;
    }
    let start = 0;
    for (let nl = buffer.indexOf("\n", start); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const end = nl > start && buffer.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const record = take(buffer.slice(start, end));
      start = nl + 1;
      if (record) yield record;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer !== "" || pending !== null) {
    const record = take(buffer.endsWith("\r") ? buffer.slice(0, -1) : buffer);
    if (record) yield record;
  }
  if (pending !== null) throw new CsvSyntaxError(row + 1, "a quoted field is never closed");
}
