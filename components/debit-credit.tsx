// A ledger amount as accountants read it: two cells, debit then credit, the
// signed amount (debits positive) shown unsigned in the one it belongs to.
import { formatMoney } from "@/components/money";

export function DebitCreditCells({ amount, currency }: { amount: bigint; currency: string }) {
  return (
    <>
      <td className="num">{amount > 0n ? formatMoney(amount, currency) : ""}</td>
      <td className="num">{amount < 0n ? formatMoney(-amount, currency) : ""}</td>
    </>
  );
}
