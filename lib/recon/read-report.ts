// Turns a settlement report file into settlement lines: csv-parse (lib/recon/csv.ts)
// for the records, the header for the format (forced, or detected), the format's
// mapper for each row. Throws CsvSyntaxError or ReportError naming row and column.
// Runs inside the report thread (lib/recon/report-thread.ts), never on the web
// process's event loop: see lib/recon/report-relay.ts for why.
import { createReadStream } from "node:fs";
import { readCsv } from "@/lib/recon/csv";
import { mapperFor, ReportError } from "@/lib/providers/report";
import { describeFormats, detectReport, reportParserFor } from "@/lib/recon/report-formats";
import type { SettlementLine } from "@/lib/providers/types";

/** What the file's header said: known once its first record has been read. */
export type ReportMeta = { header: string[] | null; format: string };

export async function* readReport(
  file: string,
  forced: string | undefined,
  meta: ReportMeta,
): AsyncGenerator<SettlementLine> {
  let map: ((row: number, fields: string[], raw: string) => SettlementLine) | null = null;
  for await (const record of readCsv(createReadStream(file))) {
    if (!map) {
      const parser = forced !== undefined ? reportParserFor(forced) : detectReport(record.fields);
      if (!parser)
        throw new ReportError(
          1,
          null,
          forced !== undefined
            ? `unknown report format "${forced}"`
            : `unrecognised report: expected ${describeFormats()}`,
        );
      meta.header = record.fields.map((f) => f.trim());
      meta.format = parser.format;
      map = mapperFor(parser, record.fields);
      continue;
    }
    yield map(record.row, record.fields, record.raw);
  }
  if (!map) throw new ReportError(1, null, "the file is empty");
}
