// Settlement reports uploaded through the dashboard: the request body is streamed
// to a temporary file (never held in memory, so a million-line report is fine),
// refused past a size cap, and handed to runReconciliation as a CSV source.
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";

export type ReceivedReport =
  | { ok: true; file: string; bytes: number; remove(): Promise<void> }
  | { ok: false; reason: "too_large" | "empty"; message: string };

class TooLarge extends Error {}

/** The name people gave the file, made safe to use as a file name (it becomes the run's source name). */
export function reportFileName(name: string | null | undefined): string {
  const base = path
    .basename(String(name ?? ""))
    .replace(/[^\w.\- ]+/g, "_")
    .trim()
    .slice(0, 120);
  return base && base !== "." && base !== ".." ? base : "settlement-report.csv";
}

export async function receiveReport(
  body: ReadableStream<Uint8Array> | null,
  o: { maxBytes: number; fileName: string },
): Promise<ReceivedReport> {
  if (!body) return { ok: false, reason: "empty", message: "The upload is empty: choose a settlement report file" };
  const dir = await mkdtemp(path.join(os.tmpdir(), "tally-upload-"));
  const file = path.join(dir, reportFileName(o.fileName));
  const remove = () => rm(dir, { recursive: true, force: true });
  let bytes = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > o.maxBytes) return done(new TooLarge());
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(body as WebReadableStream<Uint8Array>), cap, createWriteStream(file));
  } catch (error) {
    await remove();
    if (error instanceof TooLarge)
      return {
        ok: false,
        reason: "too_large",
        message: `The report is larger than the ${Math.round(o.maxBytes / 1024 / 1024)} MiB limit (TALLY_RECON_UPLOAD_MAX_BYTES); split it by date and upload the parts`,
      };
    throw error;
  }
  if (bytes === 0) {
    await remove();
    return { ok: false, reason: "empty", message: "The upload is empty: choose a settlement report file" };
  }
  return { ok: true, file, bytes, remove };
}
