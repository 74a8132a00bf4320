// A statement's lines in file order, each with what it matched: the payouts a
// credit settled and by which rule (a within-tolerance match says its difference),
// or, for a credit nothing claimed, why (two payouts fit it…) and the case it
// became. Unmatched credits are highlighted and say so in words.
import Link from "next/link";
import { matchRuleLabel } from "@/components/bank/match-rule";
import { formatMoney } from "@/components/money";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";

export type LineView = {
  id: string;
  rowNo: number;
  entryRef: string | null;
  bookingDate: string;
  valueDate: string | null;
  amount: string;
  currency: string;
  remittance: string;
  counterparty: string | null;
  reversal: boolean;
  matchedAt: string | null;
  matchRule: string | null;
  matchNote: string | null;
  payouts: {
    id: string;
    provider: string;
    reference: string;
    currency: string;
    amount: string | null;
    arrivalDate: string | null;
  }[];
  discrepancy: { id: string; state: string; caseId: string | null; caseStatus: string | null } | null;
};

function Match({ line, tenant, seesCases }: { line: LineView; tenant: string; seesCases: boolean }) {
  if (line.matchRule)
    return (
      <>
        <span className={line.matchRule === "within_tolerance" ? "badge badge-warn" : "badge badge-good"}>
          {matchRuleLabel(line.matchRule)}
        </span>
        <ul className="inline-list small">
          {line.payouts.map((p) => (
            <li key={p.id}>
              <span className="mono">{p.reference}</span> ({p.provider}
              {p.amount ? `, ${formatMoney(p.amount, p.currency)}` : ""}
              {p.arrivalDate ? `, arrival ${p.arrivalDate.slice(0, 10)}` : ""})
            </li>
          ))}
        </ul>
        {line.matchNote && <div className="small muted">{line.matchNote}</div>}
      </>
    );
  if (BigInt(line.amount) <= 0n || line.reversal)
    return <span className="muted small">{line.reversal ? "reversal: not a payout" : "debit"}</span>;
  return (
    <>
      <span className="badge badge-bad">unmatched</span>
      {line.matchNote && <div className="small">{line.matchNote}</div>}
      {line.discrepancy && (
        <div className="small">
          {line.discrepancy.caseId && seesCases ? (
            <Link href={`/t/${tenant}/cases/${line.discrepancy.caseId}`}>
              Case #{line.discrepancy.caseId} ({line.discrepancy.caseStatus?.toLowerCase()})
            </Link>
          ) : (
            `A discrepancy (${line.discrepancy.state.toLowerCase()})`
          )}
          : no payout explains this credit from a provider
        </div>
      )}
    </>
  );
}

export function LinesTable({ tenant, lines, seesCases }: { tenant: string; lines: LineView[]; seesCases: boolean }) {
  return (
    <TableScroll label="Statement lines">
      <table className="table" data-testid="bank-lines">
        <caption className="visually-hidden">The statement&apos;s lines in file order, with their match</caption>
        <TableHead columns={["Row", "Booked", num("Amount"), "Remittance", "Match"]} />
        <tbody>
          {lines.map((l) => {
            const unmatched = BigInt(l.amount) > 0n && !l.matchRule && !l.reversal;
            return (
              <tr key={l.id} className={unmatched ? "row-unmatched" : undefined} data-row={l.rowNo}>
                <td className="num">
                  {l.rowNo}
                  {l.entryRef && <div className="small muted mono">{l.entryRef}</div>}
                </td>
                <td className="day">
                  {l.bookingDate.slice(0, 10)}
                  {l.valueDate && l.valueDate !== l.bookingDate && (
                    <div className="small muted">value {l.valueDate.slice(0, 10)}</div>
                  )}
                </td>
                <td className="num">{formatMoney(l.amount, l.currency)}</td>
                <td className="wrap">
                  {l.remittance || <span className="muted">—</span>}
                  {l.counterparty && <div className="small muted">{l.counterparty}</div>}
                </td>
                <td>
                  <Match line={l} tenant={tenant} seesCases={seesCases} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}
