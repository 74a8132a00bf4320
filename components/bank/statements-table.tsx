// Imported bank statements, newest first: the file, the account and period, who
// imported it, and how much of it matched (unmatched credits stand out).
import Link from "next/link";
import { utc } from "@/components/format";
import { NextPage } from "@/components/pager";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";

export type StatementRowView = {
  id: string;
  format: string;
  sourceName: string | null;
  account: string;
  fromDate: string | null;
  toDate: string | null;
  lines: number;
  skipped: number;
  credits: number;
  debits: number;
  matched: number;
  unmatchedCredits: number;
  actorLabel: string;
  importedAt: string;
};

function Period({ s }: { s: StatementRowView }) {
  if (!s.fromDate && !s.toDate) return "—";
  return (
    <>
      <span className="day">{(s.fromDate ?? s.toDate)!.slice(0, 10)}</span> →{" "}
      <span className="day">{(s.toDate ?? s.fromDate)!.slice(0, 10)}</span>
    </>
  );
}

export function StatementsTable({
  tenant,
  statements,
  nextBefore,
}: {
  tenant: string;
  statements: StatementRowView[];
  nextBefore: string | null;
}) {
  if (statements.length === 0)
    return (
      <div className="empty">
        <h3>No bank statements yet</h3>
        <p>
          Import one above (camt.053 from the bank&apos;s online banking, or its CSV export), or with{" "}
          <code>npm run tally -- bank import</code>. Each import matches the payouts still in transit.
        </p>
      </div>
    );
  return (
    <>
      <TableScroll label="Bank statements">
        <table className="table" data-testid="statements-table">
          <caption className="visually-hidden">Imported bank statements, newest first</caption>
          <TableHead
            columns={[
              "Statement",
              "Account",
              "Period",
              "Imported",
              num("Lines"),
              num("Credits"),
              num("Matched"),
              num("Unmatched credits"),
            ]}
          />
          <tbody>
            {statements.map((s) => (
              <tr key={s.id} className={s.unmatchedCredits ? "row-unmatched" : undefined}>
                <td>
                  <Link href={`/t/${tenant}/bank/${s.id}`}>#{s.id}</Link>{" "}
                  <span className="muted">{s.format === "csv" ? "CSV" : "camt.053"}</span>
                  <div className="small muted">{s.sourceName ?? ""}</div>
                </td>
                <td className="mono">{s.account}</td>
                <td>
                  <Period s={s} />
                </td>
                <td>
                  {s.actorLabel}
                  <div className="small muted">{utc(s.importedAt, false)}</div>
                </td>
                <td className="num">
                  {s.lines}
                  {s.skipped ? <div className="small muted">+{s.skipped} not booked</div> : null}
                </td>
                <td className="num">{s.credits}</td>
                <td className="num">{s.matched}</td>
                <td className="num">
                  {s.unmatchedCredits ? <span className="tone-warn">{s.unmatchedCredits}</span> : 0}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {nextBefore && <NextPage href={`/t/${tenant}/bank?before=${nextBefore}`}>Older statements →</NextPage>}
    </>
  );
}
