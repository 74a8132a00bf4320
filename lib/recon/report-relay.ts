// Settlement reports are read off the event loop: readReport runs in a
// worker_threads thread (report-thread.ts) and this generator only relays the
// lines it sends, so a report being parsed cannot hold up a webhook's
// acknowledgement in the same process. Measured (lib/recon/report-offloop.test.ts,
// 20 webhooks/s, a 5 MiB report of 10,000-column rows, on a 2-core machine at load
// 12-15): parsed on the event loop, the ack p99 went from 143 ms to 945 ms during
// the upload (and 733 → 6974 ms in another run); through this thread, 210 → 165 ms.
//
// Why a thread entry loaded from the source tree through tsx: route code is
// bundled by `next build`, and a `new Worker()` naming a module the bundler
// rewrote has no file to load. Every Tally process runs in the project folder
// with tsx installed (the web process is `node --import tsx workers/web.ts`), so
// the thread starts from lib/recon/report-thread-entry.mjs under process.cwd(),
// which registers tsx and loads report-thread.ts. Starting it costs ~1 s of CPU
// (200 modules: the report formats come with their provider adapters) and, on a
// loaded 2-core machine, stalled acks by up to 200 ms while it ran when a thread
// was started per report; so one thread is kept per process, started at the first
// report and reused, each read on its own MessageChannel.
import path from "node:path";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { SettlementLine } from "@/lib/providers/types";
import type { ReportMeta } from "@/lib/recon/read-report";

export type ReportThreadRequest = { file: string; format: string | undefined; port: MessagePort };

export type ReportThreadMessage =
  | ({ type: "lines" | "end"; lines: SettlementLine[] } & ReportMeta)
  | { type: "refused"; message: string }
  | { type: "failed"; message: string };

/** A report refused by the thread: the message names row and column, as CsvSyntaxError's and ReportError's do. */
export class ReportRefusal extends Error {}

// turbopackIgnore: without it Turbopack follows the Worker's path and bundles the entry,
// tsx and esbuild's binary into the route ("Unknown module type", build failed).
export const REPORT_THREAD_ENTRY = () =>
  path.join(/* turbopackIgnore: true */ process.cwd(), "lib", "recon", "report-thread-entry.mjs");

let thread: Worker | null = null;

function reportThread(): Worker {
  if (thread) return thread;
  const started = new Worker(REPORT_THREAD_ENTRY(), {
    // Not the web process's own flags (its `--import tsx` does nothing in a thread): the entry registers tsx.
    execArgv: [],
  });
  started.unref(); // an idle report thread keeps no process (CLI, tests) alive
  started.on("error", () => undefined); // each read in progress hears of it below; the next read starts a new thread
  started.on("exit", () => {
    if (thread === started) thread = null;
  });
  thread = started;
  return started;
}

/** readReport's lines, read in the report thread; meta is filled in as the thread reads the header. */
export async function* relayReport(
  file: string,
  format: string | undefined,
  meta: ReportMeta,
): AsyncGenerator<SettlementLine> {
  const worker = reportThread();
  const { port1: port, port2 } = new MessageChannel();
  const inbox: ReportThreadMessage[] = [];
  let failure: Error | null = null;
  let notify: (() => void) | null = null;
  const arrived = () => {
    const n = notify;
    notify = null;
    n?.();
  };
  const stopped = (error: Error) => {
    failure ??= error;
    arrived();
  };
  const onError = (error: Error) => stopped(error);
  const onExit = (code: number) => stopped(new Error(`the report thread stopped (exit code ${code}) mid-report`));
  port.on("message", (m: ReportThreadMessage) => {
    inbox.push(m);
    arrived();
  });
  port.on("close", () => stopped(new Error("the report thread closed the report before its end")));
  worker.on("error", onError);
  worker.on("exit", onExit);
  let finished = false;
  try {
    worker.postMessage({ file, format, port: port2 } satisfies ReportThreadRequest, [port2]);
    port.postMessage("pull");
    for (;;) {
      while (inbox.length === 0 && !failure) await new Promise<void>((resolve) => (notify = resolve));
      const m = inbox.shift();
      if (!m) throw failure;
      if (m.type === "refused") {
        finished = true;
        throw new ReportRefusal(m.message);
      }
      if (m.type === "failed") {
        finished = true;
        throw new Error(`reading the report failed in the report thread: ${m.message}`);
      }
      meta.header = m.header;
      meta.format = m.format;
      // Ask for the next batch before relaying this one: the thread parses while COPY sends.
      if (m.type === "lines") port.postMessage("pull");
      else finished = true;
      yield* m.lines;
      if (m.type === "end") return;
    }
  } finally {
    if (!finished) port.postMessage("cancel");
    port.close();
    worker.off("error", onError);
    worker.off("exit", onExit);
  }
}
