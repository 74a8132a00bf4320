// One case: who works it, when it is due, whether it is snoozed; the evidence
// side by side (the webhook we received, our ledger posting, the provider's
// settlement line or its absence), then the decision: propose (with the exact
// correction, or the lines a link ties to our posting, shown first), approve or
// reject, history.
import Link from "next/link";
import { prisma } from "@/lib/platform/db";
import { isPayoutEvidence, PayoutEvidence } from "@/components/payouts/payout-evidence";
import type { ReactNode } from "react";
import { CASE_STATUS_LABEL, CONFLICT_KIND_LABEL, reasonCodeLabel } from "@/lib/cases/labels";
import {
  CaseDecision,
  LinkTable,
  type DecisionProps,
  type PendingProposal,
  type ProposedLink,
} from "@/components/cases/case-decision";
import { CaseWork } from "@/components/cases/case-work";
import { DueDate } from "@/components/cases/due-date";
import type { LinkCandidates } from "@/components/cases/link-picker";
import { AGE_BUCKETS, ageBucketOf, ageInDays } from "@/lib/cases/aging";
import { MAX_SNOOZE_DAYS } from "@/lib/cases/snooze";
import { bodyOrWhyNot, ConflictEvidence } from "@/components/cases/conflict-evidence";
import { PlanTable, type PlanLeg } from "@/components/cases/plan-table";
import { resolutionLabel } from "@/components/cases/resolution-label";
import { utc } from "@/components/format";
import { formatMoney } from "@/components/money";
import { mayDo } from "@/lib/auth/roles";
import { getCase, type CaseDetail } from "@/lib/cases/cases";
import { conflictStake, discrepancyStake } from "@/lib/cases/stake";
import { plain } from "@/lib/platform/http";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";

export const dynamic = "force-dynamic";

const STATUS: Record<string, string> = CASE_STATUS_LABEL;
const money = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "—" : formatMoney(amount, currency.trim());

export default async function CasePage({ params }: { params: DetailParams }) {
  const open = await openDetail(params, "cases", "Cases", getCase);
  if (!open.ok) return open.page;
  const { principal, slug, detail } = open.opened;
  const c = detail.case;
  if (detail.conflict)
    return <ConflictCasePage slug={slug} detail={detail} conflict={detail.conflict} principal={principal} />;
  const d = c.discrepancy!;
  const pending = c.proposals.find((p) => p.status === "PENDING") ?? null;
  const stake = discrepancyStake(d);
  const decision: DecisionProps = {
    tenant: slug,
    caseId: c.id.toString(),
    kind: c.kind,
    status: c.status,
    resolutions: detail.resolutions,
    reasonCodes: detail.reasonCodes,
    plan: detail.plan && { legs: detail.plan.legs, description: detail.plan.description },
    pending: pending && (plain(pending) as PendingProposal),
    me: principal.userId,
    canDecide: mayDo(principal.role, "decideCases"),
    secondApprovalAbove: detail.secondApprovalAbove.toString(),
    stake: stake && { amount: stake.amount.toString(), currency: stake.currency },
    linkable: detail.linkable && (plain(detail.linkable) as LinkCandidates),
  };
  const lastRun = detail.runs.find((r) => r.id === d.lastRunId);
  // A payout case links to its payout's statement as it stands now.
  const payout =
    c.kind === "PAYOUT_RESIDUAL" || c.kind === "BANK_UNMATCHED"
      ? await prisma.payout.findFirst({
          where: { tenantId: c.tenantId, provider: d.provider, reference: d.reference },
          select: { id: true },
        })
      : null;
  const header = detail.theirs?.header ?? null;
  const theirFields = detail.theirs && header ? detail.theirs.line.split(",") : null;
  return (
    <>
      <CaseFacts
        slug={slug}
        c={c}
        kind={
          c.kind === "OURS_NOT_THEIRS"
            ? "Ours, not theirs: we posted it, the provider has no record of it"
            : c.kind === "PAYOUT_RESIDUAL"
              ? "Payout does not balance: the provider paid out other than its lines add up to"
              : c.kind === "BANK_UNMATCHED"
                ? "Not at the bank: no bank credit for the payout after its window, or a credit no payout explains"
                : "Mismatch: both sides have it, with different amounts or currencies"
        }
        provider={d.provider}
        reference={d.reference}
      >
        <dt>Day</dt>
        <dd>
          {d.day.toISOString().slice(0, 10)}
          {d.possibleTiming ? (
            <span className="tone-warn"> · near the run&apos;s window edge: possibly a timing difference</span>
          ) : null}
        </dd>
        <dt>Amounts</dt>
        <dd>
          ours {money(d.ourAmount, d.ourCurrency)} · theirs {money(d.theirAmount, d.theirCurrency)}
        </dd>
        <dt>Found by</dt>
        <dd>
          run <Link href={`/t/${slug}/reconciliation/${d.firstRunId}`}>#{d.firstRunId.toString()}</Link>
          {d.lastRunId !== d.firstRunId ? (
            <>
              , last seen by run{" "}
              <Link href={`/t/${slug}/reconciliation/${d.lastRunId}`}>#{d.lastRunId.toString()}</Link>
            </>
          ) : null}
        </dd>
        {c.resolution && (
          <>
            <dt>Outcome</dt>
            <dd>{c.resolution}</dd>
          </>
        )}
      </CaseFacts>

      <h2>Evidence</h2>
      <div className="evidence">
        <section aria-labelledby="ev-webhook">
          <h3 id="ev-webhook">The webhook we received</h3>
          {detail.raw ? (
            <>
              <p className="small">
                <Link href={`/t/${slug}/events/${detail.raw.id}`}>Event #{detail.raw.id.toString()}</Link> ·{" "}
                {detail.raw.eventType ?? "type unknown"} · via {detail.raw.source.toLowerCase()}
                <br />
                received {utc(detail.raw.receivedAt)} UTC
                {detail.raw.deliveryId ? (
                  <>
                    {" "}
                    as <code>{detail.raw.deliveryId}</code>
                  </>
                ) : null}
              </p>
              <pre tabIndex={0} aria-label="Raw webhook body">
                {bodyOrWhyNot(detail.raw)}
              </pre>
            </>
          ) : (
            <p className="absent">No raw event is linked to this movement.</p>
          )}
        </section>
        <section aria-labelledby="ev-ledger">
          <h3 id="ev-ledger">Our ledger</h3>
          {detail.postings.length === 0 ? (
            <p className="absent">No posting of ours for this reference.</p>
          ) : (
            detail.postings.map((p) => (
              <div key={p.id.toString()} className="stack small" style={{ marginBottom: ".75rem" }}>
                <div>
                  <strong>Posting #{p.id.toString()}</strong> · {p.kind.toLowerCase()}
                  {p.reversesPostingId ? <> (corrects #{p.reversesPostingId.toString()})</> : null}
                  <br />
                  <span className="muted">
                    {p.description}; {utc(p.occurredAt)} UTC
                  </span>
                </div>
                <PlanTable
                  legs={p.entries.map((e) => ({
                    accountId: e.account.id.toString(),
                    accountCode: e.account.code,
                    accountKind: e.account.kind,
                    amount: e.amount.toString(),
                    currency: e.currency,
                  }))}
                  caption="Legs"
                />
              </div>
            ))
          )}
        </section>
        <section aria-labelledby="ev-theirs">
          <h3 id="ev-theirs">The provider&apos;s settlement</h3>
          {isPayoutEvidence(detail.theirs) ? (
            <PayoutEvidence
              evidence={detail.theirs}
              payoutHref={payout ? `/t/${slug}/reconciliation/payouts/${payout.id}` : null}
            />
          ) : detail.theirs ? (
            <>
              <p className="small">
                Row {detail.theirs.row} of the{" "}
                {detail.theirs.format === "api" ? "settlement API listing" : `${detail.theirs.format} report`}
                {lastRun?.sourceName ? (
                  <>
                    {" "}
                    <span className="mono">{lastRun.sourceName}</span>
                  </>
                ) : null}
              </p>
              {header && theirFields && theirFields.length === header.length ? (
                <table className="table compact">
                  <tbody>
                    {header.map((h, i) => (
                      <tr key={h + i}>
                        <th scope="row" className="mono">
                          {h}
                        </th>
                        <td className="mono wrap">{theirFields[i]}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
              <pre tabIndex={0} aria-label="Settlement line as reported">
                {detail.theirs.line}
              </pre>
            </>
          ) : (
            <p className="absent" data-testid="their-line-absent">
              No line for <code>{d.reference}</code>: the provider&apos;s{" "}
              {lastRun?.source === "CSV" ? "report" : "settlement listing"}
              {lastRun ? (
                <>
                  {" "}
                  for {utc(lastRun.windowFrom, false)} → {utc(lastRun.windowTo, false)} UTC (run #
                  {lastRun.id.toString()}
                  {lastRun.sourceName ? `, ${lastRun.sourceName}` : ""})
                </>
              ) : null}{" "}
              does not mention it.
            </p>
          )}
        </section>
      </div>

      <Work slug={slug} detail={detail} principal={principal} />
      <CaseDecision {...decision} />

      {c.proposals.length > 0 && (
        <>
          <h2>History</h2>
          <ol className="steps">
            {c.proposals.map((p) => (
              <li key={p.id.toString()}>
                <strong>{p.proposedByLabel}</strong> proposed <em>{resolutionLabel(p.resolution, c.kind)}</em> at{" "}
                {utc(p.proposedAt, false)} UTC
                {p.reasonCode ? <>, reason code: {reasonCodeLabel(p.reasonCode)}</> : null}: “{p.reason}” —{" "}
                <span className={p.status === "APPROVED" ? "tone-good" : p.status === "REJECTED" ? "tone-bad" : ""}>
                  {p.status.toLowerCase()}
                </span>
                {p.approvals.length > 0 && (
                  <ul>
                    {p.approvals.map((a) => (
                      <li key={a.id.toString()}>
                        {a.approverLabel} {a.decision === "APPROVE" ? "approved" : "rejected"} at {utc(a.at, false)} UTC
                        {a.reason ? `: “${a.reason}”` : ""}
                      </li>
                    ))}
                  </ul>
                )}
                {p.postingId && <div className="small">Correction posted as posting #{p.postingId.toString()}.</div>}
                {p.links.length > 0 && (
                  <LinkTable
                    links={plain(p.links) as ProposedLink[]}
                    caption={p.status === "APPROVED" ? "The link as approved" : "The link as proposed"}
                  />
                )}
                {p.status === "APPROVED" && p.correction ? (
                  <PlanTable
                    legs={(p.correction as unknown as { legs: PlanLeg[] }).legs}
                    caption="The correction as approved"
                  />
                ) : null}
              </li>
            ))}
          </ol>
        </>
      )}
    </>
  );
}

/** A conflict case: both deliveries side by side, and the same four-eyes decision. */
function ConflictCasePage({
  slug,
  detail,
  conflict,
  principal,
}: {
  slug: string;
  detail: CaseDetail;
  conflict: NonNullable<CaseDetail["conflict"]>;
  principal: { role: Parameters<typeof mayDo>[0]; userId: string };
}) {
  const c = detail.case;
  const pending = c.proposals.find((p) => p.status === "PENDING") ?? null;
  // The same stake the proposal is judged by (lib/cases/stake.ts), not a second computation of it.
  const largest = conflictStake([conflict.claimed, conflict.delivered] as { amount?: string; currency?: string }[]);
  const stake = largest.amount > 0n ? { amount: largest.amount.toString(), currency: largest.currency } : null;
  return (
    <>
      <CaseFacts
        slug={slug}
        c={c}
        kind={CONFLICT_KIND_LABEL[conflict.kind].title}
        provider={conflict.provider}
        reference={conflict.reference}
      >
        <dt>Detected</dt>
        <dd>{utc(conflict.detectedAt)} UTC</dd>
        {c.resolution && (
          <>
            <dt>Outcome</dt>
            <dd>{c.resolution}</dd>
          </>
        )}
      </CaseFacts>
      <ConflictEvidence
        tenant={slug}
        kind={conflict.kind}
        claimed={conflict.claimed}
        delivered={conflict.delivered}
        raws={conflict.raws.map((r) => ({ ...r, id: r.id.toString() }))}
      />
      <Work slug={slug} detail={detail} principal={principal} />
      <CaseDecision
        tenant={slug}
        caseId={c.id.toString()}
        kind={c.kind}
        status={c.status}
        resolutions={detail.resolutions}
        reasonCodes={detail.reasonCodes}
        plan={null}
        pending={pending && (plain(pending) as PendingProposal)}
        me={principal.userId}
        canDecide={mayDo(principal.role, "decideCases")}
        secondApprovalAbove={detail.secondApprovalAbove.toString()}
        stake={stake}
        linkable={null}
      />
    </>
  );
}

/** How every case page opens, reconciliation or conflict: the way back, the case and its state, what and whose it is. */
function CaseFacts({
  slug,
  c,
  kind,
  provider,
  reference,
  children,
}: {
  slug: string;
  c: CaseDetail["case"];
  kind: string;
  provider: string;
  reference: string;
  children: ReactNode;
}) {
  return (
    <>
      <p>
        <Link href={`/t/${slug}/cases`}>← Cases</Link>
      </p>
      <h1>
        Case #{c.id.toString()} <span className="badge badge-muted">{STATUS[c.status]}</span>
      </h1>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{kind}</dd>
        <dt>Reference</dt>
        <dd className="mono">
          {provider} · {reference}
        </dd>
        <dt>Opened</dt>
        <dd>
          {utc(c.openedAt, false)} UTC
          {c.closedAt === null ? <> · {ageWords(c.openedAt)}</> : <> · closed {utc(c.closedAt, false)} UTC</>}
        </dd>
        <dt>Due</dt>
        <dd data-testid="due">
          <DueDate dueAt={c.dueAt} closed={c.closedAt !== null} now={new Date()} />
        </dd>
        <dt>Assignee</dt>
        <dd>{c.assignee ? (c.assignee.name ?? c.assignee.email) : <span className="muted">unassigned</span>}</dd>
        {children}
      </dl>
    </>
  );
}

/** "12 days old (8–30 days)": the age bucket the list counts the case in. */
function ageWords(openedAt: Date): string {
  const now = new Date();
  const days = ageInDays(openedAt, now);
  const bucket = AGE_BUCKETS.find((b) => b.bucket === ageBucketOf(openedAt, now))!;
  return `${days} day${days === 1 ? "" : "s"} old (${bucket.label})`;
}

/** Assignment and snooze, for every kind of case. */
function Work({
  slug,
  detail,
  principal,
}: {
  slug: string;
  detail: CaseDetail;
  principal: { role: Parameters<typeof mayDo>[0]; userId: string };
}) {
  const c = detail.case;
  const now = detail.work.now.getTime();
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return (
    <CaseWork
      tenant={slug}
      caseId={c.id.toString()}
      status={c.status}
      me={principal.userId}
      canAct={mayDo(principal.role, "decideCases")}
      assignee={c.assignee}
      people={detail.work.people}
      snoozedUntil={c.snoozedUntil?.toISOString() ?? null}
      snoozeReason={c.snoozeReason}
      snoozed={detail.work.snoozed}
      // A day means its start (UTC): tomorrow is the first that is still ahead.
      snoozeMin={day(now + 86_400_000)}
      snoozeMax={day(now + MAX_SNOOZE_DAYS * 86_400_000)}
    />
  );
}
