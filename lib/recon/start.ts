// A reconciliation started by a person (dashboard or API): runReconciliation
// audits a finished run as recon.run; a refused one (a malformed report, no
// settlement API, a bad window) is audited here, so every attempt is on record.
import { recordAudit } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { runReconciliation, type ReconInput, type ReconSummary } from "@/lib/recon/run";
import type { DomainResult } from "@/lib/platform/refusal";
import { windowEndingBy } from "@/lib/recon/schedule";

export async function startReconciliation(
  asked: ReconInput & { fileName?: string },
): Promise<DomainResult<ReconSummary>> {
  const input = { ...asked, window: asked.window && (windowEndingBy(asked.window, new Date()) ?? undefined) };
  const r: DomainResult<ReconSummary> =
    asked.window && !input.window
      ? { ok: false, reason: "bad_window", message: "The window starts after now: nothing can have settled there yet" }
      : await runReconciliation(input);
  if (!r.ok) {
    const failedRun = await prisma.reconRun.findFirst({
      where: { tenantId: input.tenantId, provider: input.provider, actorLabel: input.actor.label, status: "FAILED" },
      orderBy: { id: "desc" },
      select: { id: true, error: true },
    });
    const run = failedRun && failedRun.error === r.message ? String(failedRun.id) : null;
    await prisma.$transaction((tx) =>
      recordAudit(tx, {
        actor: input.actor,
        action: "recon.run_refused",
        subjectType: run ? "recon_run" : "tenant",
        subjectId: run ?? input.tenantId,
        tenantId: input.tenantId,
        reason: r.message,
        details: {
          provider: input.provider,
          source: input.source.kind,
          file: input.fileName ?? null,
          from: asked.window?.from ?? null,
          to: asked.window?.to ?? null,
          refused: r.reason,
        },
      }),
    );
  }
  return r;
}
