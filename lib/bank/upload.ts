// A bank statement uploaded through the API or the dashboard: the body goes to a
// temporary file first (lib/recon/upload.ts: streamed, capped), so a slow upload
// never holds the import's transaction open; then it is imported from disk.
import { importBankStatement, type ImportSummary, type StatementFormat } from "@/lib/bank/import";
import type { Actor } from "@/lib/admin/audit";
import type { DomainResult } from "@/lib/platform/refusal";
import { receiveReport, reportFileName } from "@/lib/recon/upload";

export type StatementUpload = {
  tenantId: string;
  body: ReadableStream<Uint8Array> | null;
  /** What the sender says the body's length is, when it says. */
  declaredBytes: number | null;
  maxBytes: number;
  format: StatementFormat;
  layout?: unknown;
  fileName: string | undefined;
  actor: Actor;
};

const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;

export async function uploadStatement(u: StatementUpload): Promise<DomainResult<ImportSummary & { bytes: number }>> {
  const tooLarge = `The statement is larger than the ${mib(u.maxBytes)} limit (TALLY_RECON_UPLOAD_MAX_BYTES); ask the bank for shorter periods`;
  if (u.declaredBytes !== null && u.declaredBytes > u.maxBytes)
    return { ok: false, reason: "too_large", message: tooLarge };
  const sourceName = u.fileName
    ? reportFileName(u.fileName)
    : u.format === "csv"
      ? "bank-statement.csv"
      : "bank-statement.xml";
  const received = await receiveReport(u.body, { maxBytes: u.maxBytes, fileName: sourceName });
  if (!received.ok)
    return {
      ok: false,
      reason: received.reason,
      message: received.reason === "too_large" ? tooLarge : "The upload is empty: choose a bank statement file",
    };
  try {
    const r = await importBankStatement({
      tenantId: u.tenantId,
      source: { file: received.file },
      format: u.format,
      layout: u.layout,
      sourceName,
      actor: u.actor,
    });
    return r.ok ? { ok: true, value: { ...r.value, bytes: received.bytes } } : r;
  } finally {
    await received.remove();
  }
}
