// The report thread's entry (a worker_threads Worker started by report-relay.ts):
// reads one report with readReport and hands its settlement lines over in
// batches, one batch per "pull" from the web process, so at most two batches
// exist at a time whatever the report's length. A refusal (row and column) is
// sent as a message; anything else is a bug and ends the thread with the error.
// Loaded through report-thread-entry.mjs (see report-relay.ts), never bundled.
import { readlinkSync } from "node:fs";
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { ReportError } from "@/lib/providers/report";
import type { SettlementLine } from "@/lib/providers/types";
import { CsvSyntaxError } from "@/lib/recon/csv";
import { readReport, type ReportMeta } from "@/lib/recon/read-report";
import type { ReportThreadInput, ReportThreadMessage } from "@/lib/recon/report-relay";

/** Lines per batch, and a cap on a batch's evidence text (a row may be up to 64 KiB). */
const BATCH_LINES = 2000;
const BATCH_CHARS = 1 << 20;

// The thread yields the CPU to the event loop it serves: on Linux a thread has its
// own nice value, set through its kernel thread id. Best effort elsewhere.
try {
  const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
  if (Number.isInteger(tid)) os.setPriority(tid, 10);
} catch {
  // not Linux, or not permitted: the thread runs at the process's priority
}

const port = parentPort!;
const input = workerData as ReportThreadInput;
let credit = 0;
let wake: (() => void) | null = null;
port.on("message", () => {
  credit++;
  const w = wake;
  wake = null;
  w?.();
});
async function pulled(): Promise<void> {
  while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
  credit--;
}
const send = (m: ReportThreadMessage) => port.postMessage(m);

const meta: ReportMeta = { header: null, format: "" };
let lines: SettlementLine[] = [];
let chars = 0;
try {
  for await (const line of readReport(input.file, input.format, meta)) {
    lines.push(line);
    chars += line.raw.length;
    if (lines.length >= BATCH_LINES || chars >= BATCH_CHARS) {
      await pulled();
      send({ type: "lines", lines, ...meta });
      lines = [];
      chars = 0;
    }
  }
  await pulled();
  send({ type: "end", lines, ...meta });
} catch (error) {
  if (!(error instanceof CsvSyntaxError || error instanceof ReportError)) throw error;
  send({ type: "refused", message: error.message });
}
port.close();
