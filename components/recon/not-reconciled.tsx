// Settled lines the comparison does not reconcile yet (fees, disputes, adjustments,
// refund failures): shown so that nothing the provider settled vanishes from a run.
import { formatMoney } from "@/components/money";
import { num, TableHead } from "@/components/table-head";

export type NotReconciledLine = { row: number; reference: string; category: string; amount: string; currency: string };

export function NotReconciled({ count, lines }: { count: number; lines: NotReconciledLine[] }) {
  return (
    <section aria-labelledby="NOT_RECONCILED">
      <h2 id="NOT_RECONCILED">
        Not reconciled <span className="muted">({count})</span>
      </h2>
      <p className="muted small">
        Settled lines about money other than payments and refunds (fees, disputes, chargebacks, adjustments), and refund
        failures, which also turn their refund into a mismatch. Tally does not reconcile these yet; they are listed so
        none goes unseen.
      </p>
      {count === 0 ? (
        <p className="muted">None in this run.</p>
      ) : (
        <table className="table">
          <TableHead columns={["Row", "Category", "Reference", num("Amount")]} />
          <tbody>
            {lines.map((l) => (
              <tr key={l.row}>
                <td>{l.row}</td>
                <td>{l.category}</td>
                <td className="mono">{l.reference}</td>
                <td className="num">{formatMoney(BigInt(l.amount), l.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {count > lines.length && (
        <p className="muted small">
          Showing the first {lines.length} of {count}.
        </p>
      )}
    </section>
  );
}
