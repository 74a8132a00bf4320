// One reconciliation run: its window, source and outcome, then each bucket's
// discrepancies. Matched lines are counted, not stored, so they are a number here.
import Link from "next/link";
import { duration, utc } from "@/components/format";
import { formatMoney } from "@/components/money";
import { NotReconciled, type NotReconciledLine } from "@/components/recon/not-reconciled";
import { type HeldApproval, SettlementApproval } from "@/components/recon/settlement-approval";
import { plain } from "@/lib/platform/http";
import { SETTLEMENT_DECIDERS, settlementApprovalOf } from "@/lib/recon/settlement-approval";
import { mayUse } from "@/lib/auth/roles";
import type { DiscrepancyBucket } from "@/lib/generated/prisma/enums";
import { getRun } from "@/lib/recon/runs";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";

export const dynamic = "force-dynamic";

const BUCKET: Record<DiscrepancyBucket, { title: string; explain: string }> = {
  THEIRS_NOT_OURS: {
    title: "Theirs, not ours",
    explain:
      "The provider settled these; we never received the webhook. Each is fetched from the provider and posted through the normal path (or says why it could not be).",
  },
  OURS_NOT_THEIRS: {
    title: "Ours, not theirs",
    explain: "We posted these; the provider's report has no record of them. Each is a case for an accountant.",
  },
  MISMATCH: {
    title: "Mismatch",
    explain: "Both sides have these, with different amounts or currencies. Each is a case for an accountant.",
  },
  WITHIN_TOLERANCE: {
    title: "Matched within tolerance",
    explain:
      "Both sides have these, and the amounts differ by no more than the endpoint's tolerance: counted as matched, listed so no difference is silent.",
  },
  PAYOUT_RESIDUAL: {
    title: "Payout does not balance",
    explain:
      "The payout's lines (gross − refunds − fees − disputes ± adjustments) do not add up to the payout. Each is a case for an accountant.",
  },
  BANK_UNMATCHED: {
    title: "Not at the bank",
    explain: "A payout with no bank credit after its window, or a credit no payout explains. Each is a case.",
  },
};

const money = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "—" : formatMoney(amount, currency.trim());

/** The matching rules the run used (the endpoint's, when it ran): shown on every run. */
function MatchRules({ rules }: { rules: unknown }) {
  const r = (rules ?? {}) as { toleranceMinor?: string; dateLagDays?: number; priority?: string[] };
  if (r.toleranceMinor === undefined) return null;
  return (
    <p className="muted small" data-testid="run-rules">
      Matching rules: amounts within {r.toleranceMinor} minor units match (as “within tolerance”, listed below); a
      payout may reach the bank up to {r.dateLagDays} days after its arrival date; bank matching tries{" "}
      {(r.priority ?? []).join(", then ")}.
    </p>
  );
}

export default async function RunPage({ params }: { params: DetailParams }) {
  const open = await openDetail(params, "reconciliation", "Reconciliation", getRun);
  if (!open.ok) return open.page;
  const { principal, slug, detail } = open.opened;
  const { run, buckets } = detail;
  const seesCases = mayUse(principal.role, "cases");
  const seesEvents = mayUse(principal.role, "events");
  const held = await settlementApprovalOf(open.opened.tenant.id, run.id);
  return (
    <>
      <p>
        <Link href={`/t/${slug}/reconciliation`}>← Reconciliation</Link>
      </p>
      <h1>
        Run #{run.id.toString()}{" "}
        <span
          className={
            run.status === "FAILED"
              ? "badge badge-bad"
              : run.status === "RUNNING"
                ? "badge badge-warn"
                : "badge badge-good"
          }
        >
          {run.status.toLowerCase()}
        </span>
      </h1>
      <dl className="facts">
        <dt>Provider</dt>
        <dd>{run.provider}</dd>
        <dt>Window</dt>
        <dd>
          {run.status === "FAILED" && run.windowFrom.getTime() === 0 ? (
            "not known: the report was refused before its lines were read"
          ) : (
            <>
              {utc(run.windowFrom)} → {utc(run.windowTo)} UTC
            </>
          )}
        </dd>
        <dt>Source</dt>
        <dd>
          {run.source === "CSV"
            ? "settlement report"
            : run.source === "BANK"
              ? "bank statement, matched to the payouts"
              : "settlement API"}
          {run.sourceName ? (
            <>
              {" "}
              · <span className="mono">{run.sourceName}</span>
            </>
          ) : null}
        </dd>
        <dt>Started by</dt>
        <dd data-testid="run-started-by">
          {detail.startedBy.label} at {utc(run.startedAt)} UTC
        </dd>
        <dt>Took</dt>
        <dd>
          {run.durationMs === null ? "—" : run.durationMs < 1000 ? `${run.durationMs} ms` : duration(run.durationMs)}
        </dd>
        {run.webhooksReceived !== null && (
          <>
            <dt>Webhooks in the window</dt>
            <dd>
              {run.webhooksReceived}
              {run.silenceAlert ? (
                <span className="tone-bad"> — too few for what was settled: webhook-silence alert raised</span>
              ) : null}
            </dd>
          </>
        )}
        {run.error && (
          <>
            <dt>Error</dt>
            <dd className="error">{run.error}</dd>
          </>
        )}
      </dl>
      {run.status !== "FAILED" && (
        <ul className="stat-row">
          <li className="stat">
            <span className="stat-value">{run.compared}</span>
            <span className="stat-label">compared</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.matched}</span>
            <span className="stat-label">matched (a count only: matches are not stored one by one)</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.theirsNotOurs}</span>
            <span className="stat-label">theirs, not ours</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.oursNotTheirs}</span>
            <span className="stat-label">ours, not theirs</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.mismatched}</span>
            <span className="stat-label">mismatch</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.notReconciled}</span>
            <span className="stat-label">not reconciled</span>
          </li>
          <li className="stat">
            <span className="stat-value" data-testid="run-within-tolerance">
              {run.withinTolerance}
            </span>
            <span className="stat-label">of the matched, within tolerance</span>
          </li>
          <li className="stat">
            <span className="stat-value" data-testid="run-fees-posted">
              {run.feesPosted}
            </span>
            <span className="stat-label">fees posted from the settlement</span>
          </li>
          <li className="stat">
            <span className="stat-value">{run.payouts}</span>
            <span className="stat-label">
              <Link href={`/t/${slug}/reconciliation/payouts`}>payouts</Link> its lines belong to
            </span>
          </li>
        </ul>
      )}
      {run.status !== "FAILED" && <MatchRules rules={run.rules} />}
      {held && (
        <SettlementApproval
          tenant={slug}
          runId={run.id.toString()}
          approval={plain(held) as HeldApproval}
          mayDecide={SETTLEMENT_DECIDERS.includes(principal.role) && held.startedById !== principal.userId}
        />
      )}
      <nav aria-label="Buckets" className="subnav">
        {buckets.map((b) => (
          <a key={b.bucket} href={`#${b.bucket}`}>
            {BUCKET[b.bucket].title} ({b.count})
          </a>
        ))}
      </nav>
      {buckets.map((b) => (
        <section key={b.bucket} aria-labelledby={b.bucket}>
          <h2 id={b.bucket}>
            {BUCKET[b.bucket].title} <span className="muted">({b.count})</span>
          </h2>
          <p className="muted small">{BUCKET[b.bucket].explain}</p>
          {b.count === 0 ? (
            <p className="muted">None in this run.</p>
          ) : (
            <TableScroll label={`${BUCKET[b.bucket].title}, scrolls sideways`}>
              <table className="table">
                <TableHead
                  columns={[
                    "Reference",
                    "Day",
                    num("Theirs"),
                    num("Ours"),
                    "State",
                    "Note",
                    ...(b.bucket !== "THEIRS_NOT_OURS" ? ["Case"] : []),
                  ]}
                />
                <tbody>
                  {b.items.map((d) => (
                    <tr key={d.id.toString()}>
                      <td className="mono">
                        {d.rawEventId && seesEvents ? (
                          <Link href={`/t/${slug}/events/${d.rawEventId}`}>{d.reference}</Link>
                        ) : (
                          d.reference
                        )}
                        {d.firstRunId !== run.id ? (
                          <div className="small muted">first seen by run #{d.firstRunId.toString()}</div>
                        ) : null}
                      </td>
                      <td>
                        {d.day.toISOString().slice(0, 10)}
                        {d.possibleTiming ? (
                          <div className="small tone-warn">near the window edge: possibly timing</div>
                        ) : null}
                      </td>
                      <td className="num">{money(d.theirAmount, d.theirCurrency)}</td>
                      <td className="num">{money(d.ourAmount, d.ourCurrency)}</td>
                      <td>{d.state.toLowerCase().replace("_", " ")}</td>
                      <td className="small">{d.note ?? ""}</td>
                      {b.bucket !== "THEIRS_NOT_OURS" && (
                        <td>
                          {d.case ? (
                            seesCases ? (
                              <Link href={`/t/${slug}/cases/${d.case.id}`}>
                                #{d.case.id.toString()} {d.case.status.toLowerCase()}
                              </Link>
                            ) : (
                              `#${d.case.id} ${d.case.status.toLowerCase()}`
                            )
                          ) : (
                            "—"
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
          {b.count > b.items.length && (
            <p className="muted small">
              Showing the first {b.items.length} of {b.count}.
            </p>
          )}
        </section>
      ))}
      {run.status !== "FAILED" && (
        <NotReconciled count={run.notReconciled} lines={run.notReconciledLines as NotReconciledLine[]} />
      )}
    </>
  );
}
