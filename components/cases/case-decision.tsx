"use client";
// Deciding a case, four-eyes: an accountant proposes (and sees the exact
// correction posting, or the lines a link ties to our posting, before
// submitting); a different accountant approves or rejects. The proposer gets no
// approve button; the server refuses them anyway.
import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent } from "react";
import { PlanTable, type PlanLeg } from "@/components/cases/plan-table";
import { reasonCodeLabel, resolutionLabel, type Resolution } from "@/components/cases/resolution-label";
import type { CaseKindCode } from "@/lib/cases/labels";
import { formatMoney } from "@/components/money";
import { correctionStake } from "@/lib/cases/stake";
import { useApiMutation } from "@/components/use-api-mutation";
import { LinkPicker, linkTotal, type LinkCandidates } from "@/components/cases/link-picker";

/** A line of a link as stored with its proposal. */
export type ProposedLink = {
  discrepancyId: string;
  postingId: string;
  amount: string;
  currency: string;
  discrepancy: { reference: string; day: string };
};

export type PendingProposal = {
  id: string;
  resolution: Resolution;
  reasonCode: string | null;
  reason: string;
  proposedById: string;
  proposedByLabel: string;
  proposedAt: string;
  amount: string;
  currency: string;
  requiredApprovals: number;
  correction: { legs: PlanLeg[]; description: string } | null;
  links: ProposedLink[];
  approvals: { approverId: string; approverLabel: string; decision: string }[];
};

export type DecisionProps = {
  tenant: string;
  caseId: string;
  kind: CaseKindCode;
  status: string;
  resolutions: Resolution[];
  reasonCodes: { code: string; label: string }[];
  plan: { legs: PlanLeg[]; description: string } | null;
  pending: PendingProposal | null;
  me: string;
  canDecide: boolean;
  secondApprovalAbove: string;
  stake: { amount: string; currency: string } | null;
  /** The lines a link could take, when the case can be linked. */
  linkable: LinkCandidates | null;
};

function ProposeForm(p: DecisionProps) {
  const router = useRouter();
  const [resolution, setResolution] = useState<Resolution | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  const propose = useApiMutation<
    {
      resolution: Resolution;
      reasonCode?: string;
      reason: string;
      link?: { postingId: string; discrepancyIds: string[] };
    },
    { proposalId: string; requiredApprovals: number }
  >((body) => ({ path: `/api/v1/tenants/${p.tenant}/cases/${p.caseId}/proposals`, body }), [["overview", p.tenant]]);
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    if (!resolution) return;
    propose.mutate(
      {
        resolution,
        reason: String(f.get("reason") ?? ""),
        ...(resolution === "CORRECT" && { reasonCode: String(f.get("reasonCode") ?? "") }),
        ...(resolution === "LINK" &&
          p.linkable && { link: { postingId: p.linkable.postingId, discrepancyIds: chosen } }),
      },
      { onSuccess: () => router.refresh() },
    );
  }
  const twoNeeded = (amount: string | undefined) =>
    amount !== undefined && BigInt(amount) > BigInt(p.secondApprovalAbove);
  const linkAmount = p.linkable ? BigInt(p.linkable.amount) : null;
  const stake =
    resolution === "CORRECT"
      ? p.plan
        ? correctionStake(p.plan.legs).amount.toString()
        : undefined
      : resolution === "LINK" && linkAmount !== null
        ? (linkAmount < 0n ? -linkAmount : linkAmount).toString()
        : p.stake?.amount;
  // The server refuses a link that does not add up; the button says so first.
  const linkReady =
    resolution !== "LINK" || (p.linkable !== null && chosen.length > 0 && linkTotal(p.linkable, chosen) === linkAmount);
  const resolutions = p.resolutions.filter((r) => r !== "LINK" || p.linkable !== null);
  return (
    <form onSubmit={submit} className="panel stack" aria-labelledby="propose-h">
      <h2 id="propose-h">Propose a resolution</h2>
      <p className="small muted">
        A different accountant approves it (two different accountants when more than{" "}
        {p.stake ? formatMoney(p.secondApprovalAbove, p.stake.currency) : `${p.secondApprovalAbove} minor units`} is at
        stake). Nothing changes until then.
      </p>
      <fieldset>
        <legend>Resolution</legend>
        {resolutions.map((r) => (
          <label key={r} className="inline block-option">
            <input
              type="radio"
              name="resolution"
              value={r}
              required
              checked={resolution === r}
              onChange={() => setResolution(r)}
            />{" "}
            {resolutionLabel(r, p.kind)}
          </label>
        ))}
      </fieldset>
      {resolution === "CORRECT" && (
        <>
          <label>
            Reason code
            <select name="reasonCode" required defaultValue="">
              <option value="" disabled>
                Choose why the correction is right
              </option>
              {p.reasonCodes.map((c) => (
                <option key={c.code} value={c.code}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          {p.plan && p.plan.legs.length > 0 ? (
            <div className="plan" data-testid="correction-preview">
              <PlanTable
                legs={p.plan.legs}
                caption={`The correction posting this will make when approved: ${p.plan.description}`}
              />
              <p className="small">
                A new posting of kind correction, with the same provider and reference as ours; nothing existing is
                edited.
              </p>
            </div>
          ) : (
            <p className="error">
              Our ledger already agrees with the provider for this reference: there is nothing to correct.
            </p>
          )}
        </>
      )}
      {resolution === "LINK" && p.linkable && (
        <LinkPicker candidates={p.linkable} chosen={chosen} onChange={setChosen} />
      )}
      <label>
        Reason (for the checker and the audit log)
        <textarea
          name="reason"
          required
          minLength={3}
          maxLength={2000}
          placeholder={
            resolution === "CORRECT"
              ? "e.g. Stripe dashboard shows the intent as failed; customer was never charged"
              : resolution === "LINK"
                ? "e.g. Stripe settled the split charge as two lines"
                : "e.g. paid at 23:58, Stripe settles it in the next report"
          }
        />
      </label>
      {resolution && twoNeeded(stake) && (
        <p className="small tone-warn">More than the threshold is at stake: two different accountants must approve.</p>
      )}
      {propose.error && (
        <p role="alert" className="error">
          {propose.error.message}
        </p>
      )}
      <div className="button-row">
        <button type="submit" disabled={!resolution || !linkReady || propose.isPending}>
          {propose.isPending ? "Proposing…" : "Propose"}
        </button>
      </div>
    </form>
  );
}

function PendingPanel(p: DecisionProps & { pending: PendingProposal }) {
  const router = useRouter();
  const [rejecting, setRejecting] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const decide = useApiMutation<{ decision: "approve" | "reject"; reason?: string }, { outcome: string }>(
    (body) => ({
      path: `/api/v1/tenants/${p.tenant}/cases/${p.caseId}/approvals`,
      body: { proposalId: p.pending.id, ...body },
    }),
    [["overview", p.tenant]],
  );
  const mine = p.pending.proposedById === p.me;
  const approvedByMe = p.pending.approvals.some((a) => a.approverId === p.me);
  const approvals = p.pending.approvals.filter((a) => a.decision === "APPROVE");
  return (
    <section className="panel stack" aria-labelledby="pending-h" data-testid="pending-proposal">
      <h2 id="pending-h">Proposal waiting for approval</h2>
      <dl className="facts">
        <dt>Resolution</dt>
        <dd>{resolutionLabel(p.pending.resolution, p.kind)}</dd>
        {p.pending.reasonCode && (
          <>
            <dt>Reason code</dt>
            <dd data-testid="pending-reason-code">{reasonCodeLabel(p.pending.reasonCode)}</dd>
          </>
        )}
        <dt>Reason</dt>
        <dd>{p.pending.reason}</dd>
        <dt>Proposed by</dt>
        <dd>
          {p.pending.proposedByLabel} at {p.pending.proposedAt.replace("T", " ").slice(0, 16)} UTC
        </dd>
        <dt>Approvals</dt>
        <dd>
          {approvals.length} of {p.pending.requiredApprovals}
          {approvals.length ? ` (${approvals.map((a) => a.approverLabel).join(", ")})` : ""}
        </dd>
      </dl>
      {p.pending.correction && (
        <div className="plan">
          <PlanTable
            legs={p.pending.correction.legs}
            caption={`Posted on approval: ${p.pending.correction.description}`}
          />
        </div>
      )}
      {p.pending.links.length > 0 && <LinkTable links={p.pending.links} caption="Linked on approval" />}
      {mine ? (
        <p className="notice" data-testid="own-proposal">
          You proposed this. Four eyes: a different accountant must approve or reject it.
        </p>
      ) : !p.canDecide ? (
        <p className="muted">Only accountants approve or reject proposals.</p>
      ) : approvedByMe ? (
        <p className="notice">You approved this; it needs a different second approver.</p>
      ) : (
        <>
          <div className="button-row">
            <button
              type="button"
              disabled={decide.isPending}
              onClick={() => {
                setRejecting(false);
                setConfirming(true);
              }}
            >
              {p.pending.resolution === "CORRECT"
                ? "Approve and post the correction…"
                : p.pending.resolution === "LINK"
                  ? "Approve the link…"
                  : "Approve…"}
            </button>
            {!rejecting && (
              <button type="button" className="danger" onClick={() => setRejecting(true)}>
                Reject…
              </button>
            )}
          </div>
          {confirming && (
            <ApproveDialog
              {...p}
              lastApproval={approvals.length + 1 >= p.pending.requiredApprovals}
              pending={p.pending}
              busy={decide.isPending}
              error={decide.error?.message ?? null}
              onClose={() => setConfirming(false)}
              onConfirm={() => decide.mutate({ decision: "approve" }, { onSuccess: () => router.refresh() })}
            />
          )}
          {rejecting && (
            <form
              className="stack"
              aria-label="Reject the proposal"
              onSubmit={(e) => {
                e.preventDefault();
                decide.mutate(
                  { decision: "reject", reason: String(new FormData(e.currentTarget).get("reason") ?? "") },
                  { onSuccess: () => router.refresh() },
                );
              }}
            >
              <label>
                Why is it rejected?
                <textarea name="reason" required minLength={3} maxLength={2000} autoFocus />
              </label>
              <div className="button-row">
                <button type="submit" className="danger" disabled={decide.isPending}>
                  Reject proposal
                </button>
                <button type="button" className="secondary" onClick={() => setRejecting(false)}>
                  Cancel
                </button>
              </div>
            </form>
          )}
        </>
      )}
      {decide.error && (
        <p role="alert" className="error">
          {decide.error.message}
        </p>
      )}
    </section>
  );
}

/** Approving moves money (or closes a case): it asks once, showing exactly what happens on confirm. */
function ApproveDialog(
  p: DecisionProps & {
    pending: PendingProposal;
    lastApproval: boolean;
    busy: boolean;
    error: string | null;
    onClose: () => void;
    onConfirm: () => void;
  },
) {
  const ref = useRef<HTMLDialogElement>(null);
  const posts = p.pending.resolution === "CORRECT" && p.pending.correction;
  return (
    <dialog
      ref={(el) => {
        ref.current = el;
        if (el && !el.open) el.showModal();
      }}
      onClose={p.onClose}
      aria-labelledby="approve-h"
      aria-describedby="approve-what"
    >
      <div className="stack">
        <h2 id="approve-h">Approve case #{p.caseId}&apos;s proposal?</h2>
        <p id="approve-what">
          <strong>{resolutionLabel(p.pending.resolution, p.kind)}</strong>, proposed by {p.pending.proposedByLabel}
          {p.pending.reasonCode ? <> ({reasonCodeLabel(p.pending.reasonCode)})</> : null}.{" "}
          {!p.lastApproval
            ? `Yours is approval ${p.pending.approvals.filter((a) => a.decision === "APPROVE").length + 1} of ${p.pending.requiredApprovals}: nothing is posted until a different accountant approves too.`
            : posts
              ? "On confirm, this correction is posted to the ledger, at once and for good (a later fix is another correction):"
              : p.pending.resolution === "LINK"
                ? `On confirm, these lines are settled as our posting #${p.pending.links[0]?.postingId}: they and the case are resolved; nothing is posted to the ledger.`
                : "On confirm, the case moves on; nothing is posted to the ledger."}
        </p>
        {p.pending.resolution === "LINK" && <LinkTable links={p.pending.links} caption="To be linked" />}
        {posts && (
          <div className="plan">
            <PlanTable
              legs={p.pending.correction!.legs}
              caption={`To be posted: ${p.pending.correction!.description}`}
            />
          </div>
        )}
        {p.error && (
          <p role="alert" className="error">
            {p.error}
          </p>
        )}
        <div className="button-row">
          <button type="button" disabled={p.busy} autoFocus onClick={p.onConfirm}>
            {p.busy ? "Approving…" : posts && p.lastApproval ? "Approve and post" : "Approve"}
          </button>
          <button type="button" className="secondary" onClick={() => ref.current?.close()}>
            Cancel
          </button>
        </div>
      </div>
    </dialog>
  );
}

export function CaseDecision(p: DecisionProps) {
  if (p.pending) return <PendingPanel {...p} pending={p.pending} />;
  if (p.status === "OPEN" || p.status === "ESCALATED") {
    if (!p.canDecide) return <p className="muted">Only accountants propose resolutions for cases.</p>;
    return <ProposeForm {...p} />;
  }
  return null;
}

/** A link's lines as proposed: each settlement line and its amount, then their sum (the posting's amount). */
export function LinkTable({ links, caption }: { links: ProposedLink[]; caption: string }) {
  if (links.length === 0) return null;
  const currency = links[0]!.currency;
  const total = links.reduce((s, l) => s + BigInt(l.amount), 0n);
  return (
    <table className="table compact" data-testid="link-lines">
      <caption className="small" style={{ textAlign: "left", captionSide: "top", padding: ".25rem 0" }}>
        {caption}: posting #{links[0]!.postingId}
      </caption>
      <thead>
        <tr>
          <th scope="col">Their line</th>
          <th scope="col" className="num">
            Amount
          </th>
        </tr>
      </thead>
      <tbody>
        {links.map((l) => (
          <tr key={l.discrepancyId}>
            <td className="mono">{l.discrepancy.reference}</td>
            <td className="num">{formatMoney(l.amount, l.currency)}</td>
          </tr>
        ))}
        <tr>
          <th scope="row">Together</th>
          <td className="num">
            <strong>{formatMoney(total, currency)}</strong>
          </td>
        </tr>
      </tbody>
    </table>
  );
}
