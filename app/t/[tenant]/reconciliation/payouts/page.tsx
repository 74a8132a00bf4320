// Payouts: every payout of the tenant's providers, its close statement's verdict
// from both sides, and whether the bank has it. Accountants close a period here.
import Link from "next/link";
import { formatMoney } from "@/components/money";
import { statementVerdict } from "@/components/payouts/statement-table";
import { NoAccess } from "@/components/states";
import { num, TableHead } from "@/components/table-head";
import { TableScroll } from "@/components/table-scroll";
import { requirePage } from "@/lib/auth/page-access";
import { listPayouts } from "@/lib/recon/payouts";

export const dynamic = "force-dynamic";

export default async function PayoutsPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "reconciliation", "/payouts");
  if (!allowed) return <NoAccess role={principal.role} section="Reconciliation" />;
  const payouts = await listPayouts({ tenantId: tenant.id });
  const off = payouts.filter((p) => statementVerdict(p).tone === "bad").length;
  return (
    <>
      <p>
        <Link href={`/t/${slug}/reconciliation`}>← Reconciliation</Link>
      </p>
      <h1>Payouts</h1>
      <p className="muted">
        For every payout: gross − refunds − fees − disputes ± adjustments = net = payout, from the provider&apos;s
        settlement lines and from our ledger. A payout that does not balance is a case; one the bank has is settled.{" "}
        <a href={`/api/v1/tenants/${slug}/payouts?format=csv`} download>
          Download all statements (CSV)
        </a>
      </p>
      <p data-testid="payouts-summary">
        {payouts.length} payouts, {off} not balancing, {payouts.filter((p) => p.status === "SETTLED").length} at the
        bank.
      </p>
      {payouts.length === 0 ? (
        <p className="muted">
          No payouts yet: they come from the provider&apos;s payout webhooks and settlement reports.
        </p>
      ) : (
        <TableScroll label="Payouts">
          <table className="data" data-testid="payouts">
            <TableHead
              columns={["Payout", "Provider", "Arrival", num("Amount"), "Statement", num("Residual"), "Bank"]}
            />
            <tbody>
              {payouts.map((p) => {
                const verdict = statementVerdict(p);
                const residual = p.theirs.residual !== 0n ? p.theirs.residual : p.ours.residual;
                return (
                  <tr key={p.id.toString()}>
                    <td className="mono">
                      <Link href={`/t/${slug}/reconciliation/payouts/${p.id}`}>{p.reference}</Link>
                    </td>
                    <td>{p.provider}</td>
                    <td>{p.arrivalDate ? p.arrivalDate.toISOString().slice(0, 10) : "—"}</td>
                    <td className="num">{formatMoney(p.theirs.payout ?? p.ours.payout ?? 0n, p.currency)}</td>
                    <td>
                      <span className={`badge badge-${verdict.tone}`}>{verdict.label}</span>
                    </td>
                    <td className="num">{residual === null ? "—" : formatMoney(residual, p.currency)}</td>
                    <td>{p.status === "SETTLED" ? "at the bank" : p.status === "FAILED" ? "failed" : "in transit"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
