// The evidence of a payout case (PAYOUT_RESIDUAL), as reconciliation stored it on the
// discrepancy: the provider's statement of the payout against its amount, and the
// lines it paid out, each with its fee, so the line that explains the residual (a
// fee missing, an amount short) can be found. Read-only; amounts are minor units.
import Link from "next/link";
import { formatMoney } from "@/components/money";
import { num, TableHead } from "@/components/table-head";
import { TableScroll } from "@/components/table-scroll";

export type PayoutEvidenceData = {
  statement: Record<string, string | null>;
  ledger?: Record<string, string | null>;
  currency: string;
  note?: string;
  lines: { line_id: string; reference: string; kind: string; gross: string; fee: string; occurred_at: string }[];
};

export const isPayoutEvidence = (v: unknown): v is PayoutEvidenceData =>
  typeof v === "object" && v !== null && "statement" in v && "lines" in v;

const ROWS = ["gross", "refunds", "fees", "disputes", "adjustments", "net", "payout", "residual"] as const;

export function PayoutEvidence({ evidence, payoutHref }: { evidence: PayoutEvidenceData; payoutHref: string | null }) {
  const m = (v: string | null | undefined) => (v === null || v === undefined ? "—" : formatMoney(v, evidence.currency));
  return (
    <div data-testid="payout-evidence">
      {evidence.note && <p className="small">{evidence.note}</p>}
      {payoutHref && (
        <p className="small">
          <Link href={payoutHref}>The payout&apos;s statement, both sides, as it stands now →</Link>
        </p>
      )}
      <table className="table compact">
        <caption className="visually-hidden">The provider&apos;s statement when the case was opened</caption>
        <tbody>
          {ROWS.map((k) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="num mono">{m(evidence.statement[k])}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <TableScroll label="Lines of the payout">
        <table className="table compact">
          <TableHead columns={["Line", "Reference", "Kind", num("Gross"), num("Fee")]} />
          <tbody>
            {evidence.lines.map((l) => (
              <tr key={l.line_id}>
                <td className="mono">{l.line_id}</td>
                <td className="mono">{l.reference}</td>
                <td>{l.kind.toLowerCase().replace("_", " ")}</td>
                <td className="num">{m(l.gross)}</td>
                <td className="num">{m(l.fee)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
