// One bank statement: what the file was, the runs its import made (per provider,
// with the rules used), and its lines with their match; unmatched credits highlighted.
import Link from "next/link";
import { plural, utc } from "@/components/format";
import { LinesTable, type LineView } from "@/components/bank/lines-table";
import { NextPage } from "@/components/pager";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";
import { mayUse } from "@/lib/auth/roles";
import { getStatement, LINE_FILTERS, type LineFilter, statementLines } from "@/lib/bank/statements";
import { plain } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

const FILTER_LABEL: Record<LineFilter, string> = {
  all: "All lines",
  credits: "Credits",
  unmatched: "Unmatched credits",
  matched: "Matched",
};

export default async function StatementPage({
  params,
  searchParams,
}: {
  params: DetailParams;
  searchParams: Promise<{ filter?: string; after?: string }>;
}) {
  const open = await openDetail(params, "bank", "Bank", getStatement);
  if (!open.ok) return open.page;
  const { principal, slug, tenant, detail } = open.opened;
  const { statement, runs } = detail;
  const query = await searchParams;
  const filter = (LINE_FILTERS as readonly string[]).includes(query.filter ?? "")
    ? (query.filter as LineFilter)
    : "all";
  const after = /^\d{1,9}$/.test(query.after ?? "") ? Number(query.after) : undefined;
  const page = await statementLines(tenant.id, statement.id, { filter, afterRow: after });
  const lines = plain(page?.lines ?? []) as LineView[];
  const base = `/t/${slug}/bank/${statement.id}`;
  const seesRuns = mayUse(principal.role, "reconciliation");
  return (
    <>
      <p>
        <Link href={`/t/${slug}/bank`}>← Bank</Link>
      </p>
      <h1>
        Statement #{statement.id.toString()}{" "}
        {statement.unmatchedCredits ? (
          <span className="badge badge-warn">{plural(statement.unmatchedCredits, "unmatched credit")}</span>
        ) : (
          <span className="badge badge-good">every credit matched</span>
        )}
      </h1>
      <dl className="facts">
        <dt>File</dt>
        <dd>
          <span className="mono">{statement.sourceName ?? "—"}</span> ({statement.format === "csv" ? "CSV" : "camt.053"}
          )
        </dd>
        <dt>Account</dt>
        <dd className="mono">{statement.account}</dd>
        <dt>Period</dt>
        <dd>
          {statement.fromDate ? statement.fromDate.toISOString().slice(0, 10) : "—"} →{" "}
          {statement.toDate ? statement.toDate.toISOString().slice(0, 10) : "—"}
        </dd>
        <dt>Imported</dt>
        <dd>
          by {statement.actorLabel} at {utc(statement.importedAt)} UTC
        </dd>
        <dt>Lines</dt>
        <dd>
          {statement.lines} booked ({plural(statement.credits, "credit")}, {plural(statement.debits, "debit")},{" "}
          {statement.matched} matched)
          {statement.skipped ? `; ${statement.skipped} entries not booked (pending or information), not imported` : ""}
        </dd>
      </dl>
      {runs.length > 0 && (
        <>
          <h2>Runs of this import</h2>
          <ul className="inline-list" data-testid="bank-runs">
            {runs.map((r) => {
              const rules = r.rules as { toleranceMinor?: string; dateLagDays?: number; priority?: string[] };
              return (
                <li key={r.id.toString()}>
                  {seesRuns ? (
                    <Link href={`/t/${slug}/reconciliation/${r.id}`}>Run #{r.id.toString()}</Link>
                  ) : (
                    `Run #${r.id}`
                  )}{" "}
                  {r.provider}: {r.matched} of {plural(r.compared, "payout")} matched ({r.withinTolerance} within
                  tolerance), {r.oursNotTheirs} payouts not at the bank, {r.theirsNotOurs} credits unexplained
                  <div className="small muted">
                    rules: tolerance {rules.toleranceMinor ?? "0"} minor units, lag {rules.dateLagDays ?? "?"} days,
                    order {(rules.priority ?? []).join(" then ") || "none"}
                  </div>
                </li>
              );
            })}
          </ul>
        </>
      )}
      <h2>Lines</h2>
      <nav aria-label="Which lines" className="subnav">
        {LINE_FILTERS.map((f) =>
          f === filter ? (
            <strong key={f} aria-current="page">
              {FILTER_LABEL[f]}
            </strong>
          ) : (
            <Link key={f} href={f === "all" ? base : `${base}?filter=${f}`}>
              {FILTER_LABEL[f]}
            </Link>
          ),
        )}
      </nav>
      {lines.length === 0 ? (
        <div className="empty">
          <p>
            {filter === "all" ? "This statement has no booked lines." : `No ${FILTER_LABEL[filter].toLowerCase()}.`}
          </p>
        </div>
      ) : (
        <LinesTable tenant={slug} lines={lines} seesCases={mayUse(principal.role, "cases")} />
      )}
      {page?.nextAfter != null && (
        <NextPage
          href={`${base}?${new URLSearchParams({ ...(filter !== "all" && { filter }), after: String(page.nextAfter) })}`}
        >
          Next lines →
        </NextPage>
      )}
    </>
  );
}
