// The reconciliation most recon tests run: Stripe, one window, against a settlement
// report file written by the test, started by the system actor. Written out in full
// four times across the case and timing tests before.
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { runReconciliation } from "@/lib/recon/run";

export function reconcileStripeFile(tenantId: string, window: { from: Date; to: Date }, file: string) {
  return runReconciliation({
    tenantId,
    provider: "stripe",
    window,
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
}
