// The report thread (a worker_threads Worker kept by report-relay.ts, one per
// process): each request names a report file and brings its own MessagePort; the
// thread reads it with readReport and hands its settlement lines over in batches,
// one batch per "pull" on that port, so at most two batches of a report exist at a
// time whatever its length. Reports read concurrently interleave here. A refusal
// (row and column) is sent as a message; "cancel" stops a read the web process
// abandoned. Loaded through report-thread-entry.mjs (see report-relay.ts), never bundled.
import { readlinkSync } from "node:fs";
import os from "node:os";
import { parentPort } from "node:worker_threads";
import { ReportError } from "@/lib/providers/report";
import type { SettlementLine } from "@/lib/providers/types";
import { CsvSyntaxError } from "@/lib/recon/csv";
import { readReport, type ReportMeta } from "@/lib/recon/read-report";
import type { ReportThreadMessage, ReportThreadRequest } from "@/lib/recon/report-relay";

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

async function read({ file, format, port }: ReportThreadRequest): Promise<void> {
  let credit = 0;
  let cancelled = false;
  let wake: (() => void) | null = null;
  port.on("message", (m: "pull" | "cancel") => {
    if (m === "cancel") cancelled = true;
    else credit++;
    const w = wake;
    wake = null;
    w?.();
  });
  /** Waits for the web process to ask for a batch; false once it has given up on the report. */
  const pulled = async () => {
    while (credit === 0 && !cancelled) await new Promise<void>((resolve) => (wake = resolve));
    credit--;
    return !cancelled;
  };
  const send = (m: ReportThreadMessage) => port.postMessage(m);
  const meta: ReportMeta = { header: null, format: "" };
  let lines: SettlementLine[] = [];
  let chars = 0;
  try {
    for await (const line of readReport(file, format, meta)) {
      lines.push(line);
      chars += line.raw.length;
      if (lines.length >= BATCH_LINES || chars >= BATCH_CHARS) {
        if (!(await pulled())) return;
        send({ type: "lines", lines, ...meta });
        lines = [];
        chars = 0;
      }
    }
    if (await pulled()) send({ type: "end", lines, ...meta });
  } catch (error) {
    if (error instanceof CsvSyntaxError || error instanceof ReportError)
      send({ type: "refused", message: error.message });
    else send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  } finally {
    port.close();
  }
}

parentPort!.on("message", (request: ReportThreadRequest) => void read(request));
