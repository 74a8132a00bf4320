// A payout's close statement, the provider's lines beside our ledger: gross −
// refunds − fees − disputes ± adjustments = net, against the payout, and the
// residual each side leaves. Server-rendered; amounts arrive as bigint minor units.
import { formatMoney } from "@/components/money";
import { num, TableHead } from "@/components/table-head";
import type { PayoutStatement, StatementSide } from "@/lib/recon/payouts";

const ROWS: { key: keyof StatementSide; label: string }[] = [
  { key: "gross", label: "Gross (payments)" },
  { key: "refunds", label: "Refunds" },
  { key: "fees", label: "Fees" },
  { key: "disputes", label: "Disputes (withdrawn and reinstated)" },
  { key: "adjustments", label: "Adjustments" },
  { key: "net", label: "Net: what the payout should be" },
  { key: "payout", label: "Payout" },
  { key: "residual", label: "Residual (payout − net)" },
];

export function StatementTable({ statement }: { statement: PayoutStatement }) {
  const cell = (v: bigint | null) => (v === null ? "—" : formatMoney(v, statement.currency));
  return (
    <table className="data statement" data-testid="payout-statement">
      <caption className="visually-hidden">Close statement of payout {statement.reference}</caption>
      <TableHead columns={["Line of the statement", num(`${statement.provider}'s report`), num("Our ledger")]} />
      <tbody>
        {ROWS.map(({ key, label }) => {
          const theirs = statement.theirs[key];
          const ours = statement.ours[key];
          const off = key === "residual" ? theirs !== 0n || ours !== 0n : theirs !== ours;
          return (
            <tr key={key} className={key === "net" || key === "residual" ? "total" : undefined}>
              <th scope="row">{label}</th>
              <td className={`num${off ? " tone-bad" : ""}`} data-testid={`theirs-${key}`}>
                {cell(theirs)}
              </td>
              <td className={`num${off ? " tone-bad" : ""}`} data-testid={`ours-${key}`}>
                {cell(ours)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The one-word verdict on a statement: what an accountant looks for first. */
export function statementVerdict(s: PayoutStatement): { label: string; tone: "good" | "bad" | "warn" } {
  if (s.theirs.residual === null || s.lines === 0) return { label: "lines not reported yet", tone: "warn" };
  if (s.theirs.residual !== 0n || s.ours.residual !== 0n) return { label: "does not balance", tone: "bad" };
  return { label: "balances", tone: "good" };
}
