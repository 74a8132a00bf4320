// Cases: ours-not-theirs and mismatches found by reconciliation, for accountants
// to decide with four eyes. Open first; closed ones on request.
import { ExportForm } from "@/components/export-form";
import Link from "next/link";
import { CASE_KIND_LABEL, CASE_STATUS_LABEL } from "@/lib/cases/labels";
import { formatMoney } from "@/components/money";
import { EmptyState, NoAccess, NothingMatches } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { listCases } from "@/lib/cases/list";
import { bigintId } from "@/lib/platform/query-params";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { NextPage } from "@/components/pager";

export const dynamic = "force-dynamic";

const STATUS: Record<string, string> = CASE_STATUS_LABEL;
const KIND: Record<string, string> = CASE_KIND_LABEL;
const money = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "—" : formatMoney(amount, currency.trim());

export default async function CasesPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<{ state?: string; kind?: string; before?: string }>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "cases");
  if (!allowed) return <NoAccess role={principal.role} section="Cases" />;
  const raw = await searchParams;
  const state = raw.state === "closed" || raw.state === "all" ? raw.state : "open";
  const kind = raw.kind === "OURS_NOT_THEIRS" || raw.kind === "MISMATCH" ? raw.kind : undefined;
  const before = bigintId.safeParse(raw.before ?? "");
  const page = await listCases({
    tenantId: tenant.id,
    state,
    kind,
    beforeId: before.success ? before.data : undefined,
  });
  return (
    <>
      <h1>Cases</h1>
      <p className="muted">
        What reconciliation found that only a person may decide: payments we posted that the provider has no record of,
        and amounts that differ. One accountant proposes; a different one approves.
      </p>
      <form method="get" className="filters" role="search" aria-label="Filter cases">
        <label>
          State
          <select name="state" defaultValue={state}>
            <option value="open">Open (to decide, awaiting approval, waiting, escalated)</option>
            <option value="closed">Resolved</option>
            <option value="all">All</option>
          </select>
        </label>
        <label>
          Kind
          <select name="kind" defaultValue={kind ?? ""}>
            <option value="">Any</option>
            <option value="OURS_NOT_THEIRS">ours, not theirs</option>
            <option value="MISMATCH">mismatch</option>
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      {page.cases.length === 0 && kind ? (
        <NothingMatches what="cases" clearHref={`/t/${slug}/cases?state=${state}`}>
          <p>
            No {state === "open" ? "open " : state === "closed" ? "resolved " : ""}case of kind {KIND[kind]}.
          </p>
        </NothingMatches>
      ) : page.cases.length === 0 ? (
        <EmptyState
          title={state === "open" ? "No open cases" : state === "closed" ? "No resolved cases yet" : "No cases yet"}
        >
          <p>
            {state === "open"
              ? "Every discrepancy reconciliation found has been decided. New cases appear here after each run."
              : "Cases appear when a reconciliation run finds a payment the provider has no record of, or an amount that differs."}
          </p>
        </EmptyState>
      ) : (
        <TableScroll label="Cases">
          <table className="table" data-testid="cases-table">
            <caption className="visually-hidden">Cases, newest first</caption>
            <TableHead
              columns={["Case", "Kind", "Reference", "Day", num("Ours"), num("Theirs"), "State", "Proposal"]}
            />
            <tbody>
              {page.cases.map((c) => {
                const p = c.proposals[0];
                const approvals = p?.approvals.filter((a) => a.decision === "APPROVE").length ?? 0;
                return (
                  <tr key={c.id.toString()}>
                    <td>
                      <Link href={`/t/${slug}/cases/${c.id}`}>Case #{c.id.toString()}</Link>
                    </td>
                    <td>{KIND[c.kind]}</td>
                    {c.discrepancy ? (
                      <>
                        <td className="mono">
                          {c.discrepancy.reference}
                          <div className="small muted">{c.discrepancy.provider}</div>
                        </td>
                        <td>
                          {c.discrepancy.day.toISOString().slice(0, 10)}
                          {c.discrepancy.possibleTiming ? (
                            <div className="small tone-warn">near a window edge</div>
                          ) : null}
                        </td>
                        <td className="num">{money(c.discrepancy.ourAmount, c.discrepancy.ourCurrency)}</td>
                        <td className="num">{money(c.discrepancy.theirAmount, c.discrepancy.theirCurrency)}</td>
                      </>
                    ) : (
                      <>
                        <td className="mono">
                          {c.conflict?.reference}
                          <div className="small muted">{c.conflict?.provider}</div>
                        </td>
                        <td>{c.conflict?.detectedAt.toISOString().slice(0, 10)}</td>
                        <td className="num" colSpan={2}>
                          {c.conflict?.kind === "OVER_REFUND" ? "refunds exceed the payment" : "deliveries disagree"}
                        </td>
                      </>
                    )}
                    <td>{STATUS[c.status]}</td>
                    <td className="small">
                      {p ? (
                        <>
                          {p.resolution.toLowerCase()} by {p.proposedByLabel}; {approvals} of {p.requiredApprovals}{" "}
                          approvals{p.proposedById === principal.userId ? " (yours)" : ""}
                        </>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
      {page.nextBefore && (
        <NextPage
          href={`/t/${slug}/cases?${new URLSearchParams({ state, ...(kind && { kind }), before: page.nextBefore.toString() })}`}
        >
          Older cases →
        </NextPage>
      )}
      <h2>Export</h2>
      <ExportForm tenant={slug} kind="cases" what="cases" />
    </>
  );
}
