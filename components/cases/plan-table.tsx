// A correction posting as it will be (or was) made: each leg's account, debit or credit.
import { formatMoney } from "@/components/money";

export type PlanLeg = { accountId: string; accountCode: string; accountKind: string; amount: string; currency: string };

export function PlanTable({ legs, caption }: { legs: PlanLeg[]; caption: string }) {
  return (
    <table className="table compact">
      <caption className="small" style={{ textAlign: "left", captionSide: "top", padding: ".25rem 0" }}>
        {caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">Account</th>
          <th scope="col" className="num">
            Debit
          </th>
          <th scope="col" className="num">
            Credit
          </th>
        </tr>
      </thead>
      <tbody>
        {legs.map((l, i) => {
          const a = BigInt(l.amount);
          return (
            <tr key={i}>
              <td className="mono">{l.accountCode}</td>
              <td className="num">{a > 0n ? formatMoney(a, l.currency) : ""}</td>
              <td className="num">{a < 0n ? formatMoney(-a, l.currency) : ""}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
