// Cases: what reconciliation and the claim found that only a person may decide,
// for accountants to run a close with: open cases by age bucket at the top, who
// works each, when it is due, what is snoozed; filters for all of it. Open first;
// snoozed and closed ones on request.
import { ExportForm } from "@/components/export-form";
import Link from "next/link";
import { CASE_KIND_LABEL, CASE_STATUS_LABEL, CONFLICT_KIND_LABEL } from "@/lib/cases/labels";
import { formatMoney } from "@/components/money";
import { EmptyState, NoAccess, NothingMatches } from "@/components/states";
import { DueDate } from "@/components/cases/due-date";
import { requirePage } from "@/lib/auth/page-access";
import { AGE_BUCKETS, type AgeBucket } from "@/lib/cases/aging";
import { agingCounts, listCases, type CaseFilter } from "@/lib/cases/list";
import { assigneeOf, CaseQuery, type CaseQueryValue } from "@/lib/cases/list-query";
import { assignablePeople } from "@/lib/cases/people";
import { CASE_KINDS } from "@/lib/cases/sla-days";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { NextPage } from "@/components/pager";

export const dynamic = "force-dynamic";

const STATUS: Record<string, string> = CASE_STATUS_LABEL;
const KIND: Record<string, string> = CASE_KIND_LABEL;
const BUCKET_LABEL = Object.fromEntries(AGE_BUCKETS.map((b) => [b.bucket, b.label])) as Record<AgeBucket, string>;
const money = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "—" : formatMoney(amount, currency.trim());

/** The page's URL with these filters (blank ones left out). */
function hrefOf(
  slug: string,
  q: Partial<Record<"state" | "kind" | "assignee" | "age" | "overdue" | "before", string>>,
) {
  const params = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => Boolean(e[1])));
  const s = params.toString();
  return `/t/${slug}/cases${s ? `?${s}` : ""}`;
}

export default async function CasesPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "cases");
  if (!allowed) return <NoAccess role={principal.role} section="Cases" />;
  const parsed = CaseQuery.safeParse(await searchParams);
  // A hand-edited URL with a filter that is not one: say so, and show the default list.
  const q: CaseQueryValue = parsed.success ? parsed.data : CaseQuery.parse({});
  const filter: CaseFilter = {
    tenantId: tenant.id,
    state: q.state,
    kind: q.kind,
    assignee: assigneeOf(q.assignee, principal.userId) ?? undefined,
    age: q.age,
    overdue: q.overdue,
    now: new Date(),
  };
  const [page, counts, people] = await Promise.all([
    listCases({ ...filter, beforeId: q.before }),
    agingCounts(filter),
    assignablePeople(tenant.id),
  ]);
  const current = {
    state: q.state === "open" ? "" : q.state,
    kind: q.kind ?? "",
    assignee: q.assignee ?? "",
    age: q.age ?? "",
    overdue: q.overdue ? "1" : "",
  };
  const filtered = Boolean(q.kind || q.assignee || q.age || q.overdue);
  const stateWords =
    q.state === "open" ? "open " : q.state === "closed" ? "resolved " : q.state === "snoozed" ? "snoozed " : "";
  return (
    <>
      <h1>Cases</h1>
      <p className="muted">
        What reconciliation and the claim found that only a person may decide: payments we posted that the provider has
        no record of, amounts that differ, deliveries that disagree, payouts that do not balance or never reached the
        bank. One accountant proposes; a different one approves.
      </p>
      {!parsed.success && (
        <p role="alert" className="error">
          {parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}. Showing open cases instead.
        </p>
      )}

      <h2 id="aging-h">{q.state === "snoozed" ? "Snoozed cases by age" : "Open cases by age"}</h2>
      <ul className="stat-row" aria-labelledby="aging-h" data-testid="aging">
        {AGE_BUCKETS.map((b) => (
          <li key={b.bucket}>
            <Link
              className="stat"
              href={hrefOf(slug, { ...current, age: q.age === b.bucket ? "" : b.bucket })}
              aria-current={q.age === b.bucket ? "true" : undefined}
            >
              <span className="stat-value">{counts.buckets[b.bucket]}</span>
              <span className="stat-label">
                {b.label}
                {q.age === b.bucket ? " (shown)" : ""}
              </span>
            </Link>
          </li>
        ))}
        <li>
          <Link
            className={`stat ${counts.overdue ? "stat-bad" : ""}`}
            href={hrefOf(slug, { ...current, overdue: q.overdue ? "" : "1" })}
            aria-current={q.overdue ? "true" : undefined}
          >
            <span className="stat-value">{counts.overdue}</span>
            <span className="stat-label">overdue{q.overdue ? " (shown)" : ""}</span>
          </Link>
        </li>
        <li>
          <Link className="stat" href={hrefOf(slug, { ...current, state: q.state === "snoozed" ? "" : "snoozed" })}>
            <span className="stat-value">{counts.snoozed}</span>
            <span className="stat-label">snoozed{q.state === "snoozed" ? " (shown)" : ""}</span>
          </Link>
        </li>
      </ul>

      <form method="get" className="filters" role="search" aria-label="Filter cases">
        <label>
          State
          <select name="state" defaultValue={q.state}>
            <option value="open">Open (to decide, awaiting approval, waiting, escalated; not snoozed)</option>
            <option value="snoozed">Snoozed</option>
            <option value="closed">Resolved</option>
            <option value="all">All</option>
          </select>
        </label>
        <label>
          Kind
          <select name="kind" defaultValue={q.kind ?? ""}>
            <option value="">Any</option>
            {CASE_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND[k]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <select name="assignee" defaultValue={q.assignee ?? ""}>
            <option value="">Anyone or nobody</option>
            <option value="mine">Mine</option>
            <option value="unassigned">Unassigned</option>
            {people.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name ?? p.email}
              </option>
            ))}
          </select>
        </label>
        <label>
          Age
          <select name="age" defaultValue={q.age ?? ""}>
            <option value="">Any</option>
            {AGE_BUCKETS.map((b) => (
              <option key={b.bucket} value={b.bucket}>
                {b.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          <input type="checkbox" name="overdue" value="1" defaultChecked={Boolean(q.overdue)} /> Overdue only
        </label>
        <button type="submit">Filter</button>
      </form>

      {page.cases.length === 0 && filtered ? (
        <NothingMatches what="cases" clearHref={hrefOf(slug, { state: current.state })}>
          <p>No {stateWords}case matches these filters.</p>
        </NothingMatches>
      ) : page.cases.length === 0 ? (
        <EmptyState
          title={
            q.state === "open"
              ? "No open cases"
              : q.state === "snoozed"
                ? "No snoozed cases"
                : q.state === "closed"
                  ? "No resolved cases yet"
                  : "No cases yet"
          }
        >
          <p>
            {q.state === "open"
              ? "Every discrepancy reconciliation found has been decided (or is snoozed). New cases appear here after each run."
              : q.state === "snoozed"
                ? "Nothing is snoozed: a snoozed case waits here until its date, then is back in the open list by itself."
                : "Cases appear when a reconciliation run finds a payment the provider has no record of, or an amount that differs."}
          </p>
        </EmptyState>
      ) : (
        <TableScroll label="Cases">
          <table className="table" data-testid="cases-table">
            <caption className="visually-hidden">Cases, newest first</caption>
            <TableHead
              columns={[
                "Case",
                "Kind",
                "Reference",
                "Day",
                num("Ours"),
                num("Theirs"),
                "State",
                "Age",
                "Due",
                "Assignee",
                "Proposal",
              ]}
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
                          {c.conflict ? CONFLICT_KIND_LABEL[c.conflict.kind].short : ""}
                        </td>
                      </>
                    )}
                    <td>
                      {STATUS[c.status]}
                      {c.snoozed && c.snoozedUntil ? (
                        <div className="small muted">snoozed until {c.snoozedUntil.toISOString().slice(0, 10)}</div>
                      ) : null}
                    </td>
                    <td>
                      {c.ageBucket ? (
                        <>
                          {BUCKET_LABEL[c.ageBucket]}
                          <div className="small muted">
                            {c.ageDays} day{c.ageDays === 1 ? "" : "s"}
                          </div>
                        </>
                      ) : (
                        "—"
                      )}
                    </td>
                    <td>
                      <DueDate dueAt={c.dueAt} closed={c.closedAt !== null} now={page.now} />
                    </td>
                    <td className="small">
                      {c.assignee ? (
                        <>
                          {c.assignee.name ?? c.assignee.email}
                          {c.assignee.id === principal.userId ? " (you)" : ""}
                        </>
                      ) : (
                        <span className="muted">unassigned</span>
                      )}
                    </td>
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
        <NextPage href={hrefOf(slug, { ...current, before: page.nextBefore.toString() })}>Older cases →</NextPage>
      )}
      <h2>Export</h2>
      <p className="small muted">
        Every case open at any moment of the period (opened in it, closed in it, or open throughout), with its kind,
        state, assignee, opening, due and closing dates, age, resolution and amount at stake.
      </p>
      <ExportForm tenant={slug} kind="cases" what="cases" />
    </>
  );
}
