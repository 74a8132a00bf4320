"use client";
// What an uploaded report's run holds from its settlement (fees, adjustments, payouts)
// until a second person decides, and the approve/reject buttons for those who may
// (an accountant or admin who did not start the run). lib/recon/settlement-approval.ts.
import { useRouter } from "next/navigation";
import { useState } from "react";
import { formatMoney } from "@/components/money";
import { ReasonDialog } from "@/components/reason-dialog";

export type HeldApproval = {
  status: "PENDING" | "APPROVED" | "REJECTED";
  startedByLabel: string;
  fees: number;
  others: number;
  totals: { kind: string; currency: string; count: number; amount: string }[];
  decidedByLabel: string | null;
  decidedAt: string | null;
  reason: string | null;
  posted: number | null;
};

export function SettlementApproval({
  tenant,
  runId,
  approval: a,
  mayDecide,
}: {
  tenant: string;
  runId: string;
  approval: HeldApproval;
  /** An accountant or admin other than the run's starter. */
  mayDecide: boolean;
}) {
  const router = useRouter();
  const [dialog, setDialog] = useState<"approve" | "reject" | null>(null);
  const n = a.fees + a.others;
  const movements = `${n} settlement movement${n === 1 ? "" : "s"}`;
  const totals = a.totals
    .map((t) => `${t.count} ${t.kind.toLowerCase().replace("_", " ")} ${formatMoney(BigInt(t.amount), t.currency)}`)
    .join(", ");
  const request = (decision: "approve" | "reject") => (reason: string) => ({
    path: `/api/v1/tenants/${tenant}/reconciliation/runs/${runId}/approval`,
    body: { decision, reason },
  });
  return (
    <section className="panel" aria-labelledby="held-h" data-testid="settlement-approval">
      <h2 id="held-h">From the settlement</h2>
      {a.status === "PENDING" ? (
        <p className="tone-warn">
          {movements} await a second person&apos;s approval ({totals}): the report was uploaded by {a.startedByLabel},
          so nothing it alone reports is posted until someone else approves.
        </p>
      ) : (
        <p>
          {movements} ({totals}) {a.status === "APPROVED" ? "approved" : "rejected"} by {a.decidedByLabel}
          {a.decidedAt ? ` at ${a.decidedAt.slice(0, 16).replace("T", " ")} UTC` : ""}: “{a.reason}”
          {a.status === "APPROVED" ? `; ${a.posted} stored for posting.` : "; nothing was posted."}
        </p>
      )}
      {a.status === "PENDING" && mayDecide && (
        <div className="button-row">
          <button type="button" onClick={() => setDialog("approve")}>
            Approve and post…
          </button>
          <button type="button" className="secondary" onClick={() => setDialog("reject")}>
            Reject…
          </button>
        </div>
      )}
      {dialog === "approve" && (
        <ReasonDialog<unknown>
          id="approve-held"
          title={`Post run #${runId}'s ${movements}?`}
          placeholder="e.g. the file matches Stripe's dashboard for the day"
          submit="Approve and post"
          pending="Posting…"
          request={request("approve")}
          refresh={[["runs", tenant]]}
          onClose={() => setDialog(null)}
          onDone={() => router.refresh()}
        >
          {totals} will be posted to the ledger, as {a.startedByLabel}&apos;s report says.
        </ReasonDialog>
      )}
      {dialog === "reject" && (
        <ReasonDialog<unknown>
          id="reject-held"
          title={`Reject run #${runId}'s ${movements}?`}
          placeholder="e.g. the file was edited by hand"
          submit="Reject"
          pending="Rejecting…"
          request={request("reject")}
          refresh={[["runs", tenant]]}
          onClose={() => setDialog(null)}
          onDone={() => router.refresh()}
        >
          Nothing of it is posted; its discrepancies are open again.
        </ReasonDialog>
      )}
    </section>
  );
}
