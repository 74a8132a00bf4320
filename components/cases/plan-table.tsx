// A correction posting as it will be (or was) made: each leg's account, debit or credit.
import { DebitCreditCells } from "@/components/debit-credit";
import { num, TableHead } from "@/components/table-head";

export type PlanLeg = { accountId: string; accountCode: string; accountKind: string; amount: string; currency: string };

export function PlanTable({ legs, caption }: { legs: PlanLeg[]; caption: string }) {
  return (
    <table className="table compact">
      <caption className="small" style={{ textAlign: "left", captionSide: "top", padding: ".25rem 0" }}>
        {caption}
      </caption>
      <TableHead columns={["Account", num("Debit"), num("Credit")]} />
      <tbody>
        {legs.map((l, i) => {
          const a = BigInt(l.amount);
          return (
            <tr key={i}>
              <td className="mono">{l.accountCode}</td>
              <DebitCreditCells amount={a} currency={l.currency} />
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
