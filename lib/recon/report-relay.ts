// Settlement reports are read off the event loop: readReport runs in a
// worker_threads thread (report-thread.ts) and this generator only relays the
// lines it sends, so a report being parsed cannot hold up a webhook's
// acknowledgement in the same process. Measured (lib/recon/report-offloop.test.ts):
// a 5 MiB report of wide rows parsed on the event loop took the ack p99 from
// BEFORE_MS to DURING_MS; through the thread it stays at THREAD_MS.
//
// Why a thread entry loaded from the source tree through tsx: route code is
// bundled by `next build`, and a `new Worker()` naming a module the bundler
// rewrote has no file to load. Every Tally process runs in the project folder
// with tsx installed (the web process is `node --import tsx workers/web.ts`), so
// the thread starts from lib/recon/report-thread-entry.mjs under process.cwd(),
// which registers tsx and loads report-thread.ts. Starting it costs ~1.2 s
// (loading the report formats' modules), in the thread, not on the event loop.
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { SettlementLine } from "@/lib/providers/types";
import type { ReportMeta } from "@/lib/recon/read-report";

export type ReportThreadInput = { file: string; format: string | undefined };

export type ReportThreadMessage =
  | ({ type: "lines" | "end"; lines: SettlementLine[] } & ReportMeta)
  | { type: "refused"; message: string };

/** A report refused by the thread: the message names row and column, as CsvSyntaxError's and ReportError's do. */
export class ReportRefusal extends Error {}

// turbopackIgnore: without it Turbopack follows the Worker's path and bundles the entry,
// tsx and esbuild's binary into the route ("Unknown module type", build failed).
export const REPORT_THREAD_ENTRY = () =>
  path.join(/* turbopackIgnore: true */ process.cwd(), "lib", "recon", "report-thread-entry.mjs");

/** readReport's lines, read in a thread; meta is filled in as the thread reads the header. */
export async function* relayReport(
  file: string,
  format: string | undefined,
  meta: ReportMeta,
): AsyncGenerator<SettlementLine> {
  const worker = new Worker(REPORT_THREAD_ENTRY(), {
    workerData: { file, format } satisfies ReportThreadInput,
    // Not the web process's own flags (its `--import tsx` does nothing in a thread): the entry registers tsx.
    execArgv: [],
  });
  const inbox: ReportThreadMessage[] = [];
  let failure: Error | null = null;
  let notify: (() => void) | null = null;
  const arrived = () => {
    const n = notify;
    notify = null;
    n?.();
  };
  worker.on("message", (m: ReportThreadMessage) => {
    inbox.push(m);
    arrived();
  });
  worker.on("error", (error) => {
    failure ??= error;
    arrived();
  });
  worker.on("exit", (code) => {
    failure ??= new Error(`the report thread stopped (exit code ${code}) before the end of the report`);
    arrived();
  });
  try {
    worker.postMessage("pull");
    for (;;) {
      while (inbox.length === 0 && !failure) await new Promise<void>((resolve) => (notify = resolve));
      const m = inbox.shift();
      if (!m) throw failure;
      if (m.type === "refused") throw new ReportRefusal(m.message);
      meta.header = m.header;
      meta.format = m.format;
      // Ask for the next batch before relaying this one: the thread parses while COPY sends.
      if (m.type === "lines") worker.postMessage("pull");
      yield* m.lines;
      if (m.type === "end") return;
    }
  } finally {
    await worker.terminate();
  }
}
