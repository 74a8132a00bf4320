// A reconciliation started by a person (dashboard or API): runReconciliation
// audits a finished run as recon.run; a refused one (a malformed report, no
// settlement API, a bad window) is audited here, so every attempt is on record.
import { recordAudit } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { runReconciliation, type ReconInput, type ReconSummary } from "@/lib/recon/run";
import type { DomainResult } from "@/lib/platform/refusal";

export async function startReconciliation(input: ReconInput & { fileName?: string }): Promise<DomainResult<ReconSummary>> {
  const r = await runReconciliation(input);
  if (!r.ok) {
    const failedRun = await prisma.reconRun.findFirst({ where: { tenantId: input.tenantId, provider: input.provider, actorLabel: input.actor.label, status: "FAILED" }, orderBy: { id: "desc" }, select: { id: true, error: true } });
    const run = failedRun && failedRun.error === r.message ? String(failedRun.id) : null;
    await prisma.$transaction((tx) =>
      recordAudit(tx, {
        actor: input.actor,
        action: "recon.run_refused",
        subjectType: run ? "recon_run" : "tenant",
        subjectId: run ?? input.tenantId,
        tenantId: input.tenantId,
        reason: r.message,
        details: { provider: input.provider, source: input.source.kind, file: input.fileName ?? null, from: input.window?.from ?? null, to: input.window?.to ?? null, refused: r.reason },
      }),
    );
  }
  return r;
}
