// One payout's close statement: the provider's figures beside our ledger's, the
// residual each leaves, the text its transfer carries to the bank (when the
// provider names one), the bank credit it was matched to, the case a residual
// opened, and every line with both sides (the lines that explain a residual).
import Link from "next/link";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";
import { utc } from "@/components/format";
import { formatMoney } from "@/components/money";
import { StatementTable, statementVerdict } from "@/components/payouts/statement-table";
import { num, TableHead } from "@/components/table-head";
import { TableScroll } from "@/components/table-scroll";
import { mayUse } from "@/lib/auth/roles";
import { prisma } from "@/lib/platform/db";
import { getPayoutById } from "@/lib/recon/payouts";

export const dynamic = "force-dynamic";

export default async function PayoutPage({ params }: { params: DetailParams }) {
  const open = await openDetail(params, "reconciliation", "Reconciliation", getPayoutById);
  if (!open.ok) return open.page;
  const { principal, slug, detail, tenant } = open.opened;
  const { statement: s, lines } = detail;
  const verdict = statementVerdict(s);
  const [bankLine, residualCase] = await Promise.all([
    s.bankLineId ? prisma.bankLine.findFirst({ where: { id: s.bankLineId, tenantId: tenant.id } }) : null,
    prisma.case.findFirst({
      where: {
        tenantId: tenant.id,
        discrepancy: {
          provider: s.provider,
          reference: s.reference,
          bucket: { in: ["PAYOUT_RESIDUAL", "BANK_UNMATCHED"] },
        },
      },
      select: { id: true, kind: true, status: true },
      orderBy: { id: "desc" },
    }),
  ]);
  const money = (v: bigint) => formatMoney(v, s.currency);
  return (
    <>
      <p>
        <Link href={`/t/${slug}/reconciliation/payouts`}>← Payouts</Link>
      </p>
      <h1>
        Payout <span className="mono">{s.reference}</span>{" "}
        <span className={`badge badge-${verdict.tone}`} data-testid="payout-verdict">
          {verdict.label}
        </span>
      </h1>
      <dl className="facts">
        <dt>Provider</dt>
        <dd>{s.provider}</dd>
        <dt>Arrival</dt>
        <dd>{s.arrivalDate ? s.arrivalDate.toISOString().slice(0, 10) : "not given"}</dd>
        <dt>Destination</dt>
        <dd className="mono">{s.destination ?? "—"}</dd>
        {s.bankReference && (
          <>
            <dt>Bank reference</dt>
            <dd className="mono" data-testid="payout-bank-reference">
              {s.bankReference}
            </dd>
          </>
        )}
        <dt>Bank</dt>
        <dd data-testid="payout-bank">
          {bankLine
            ? `credited ${money(bankLine.amount)} on ${bankLine.bookingDate.toISOString().slice(0, 10)} (${bankLine.matchRule ?? "matched"}${bankLine.remittance ? `: “${bankLine.remittance}”` : ""})`
            : s.status === "FAILED"
              ? "failed: the bank returned it"
              : "not seen at the bank yet"}
        </dd>
        {residualCase && (
          <>
            <dt>Case</dt>
            <dd>
              {mayUse(principal.role, "cases") ? (
                <Link href={`/t/${slug}/cases/${residualCase.id}`} data-testid="payout-case">
                  Case #{residualCase.id.toString()}
                </Link>
              ) : (
                `Case #${residualCase.id}`
              )}{" "}
              ({residualCase.kind === "PAYOUT_RESIDUAL" ? "does not balance" : "not at the bank"},{" "}
              {residualCase.status.toLowerCase()})
            </dd>
          </>
        )}
      </dl>
      <h2>Close statement</h2>
      <StatementTable statement={s} />
      <p>
        <a href={`/api/v1/tenants/${slug}/payouts/${detail.id}?format=csv`} download>
          Download this statement and its lines (CSV)
        </a>
      </p>
      <h2>Lines ({lines.length})</h2>
      {lines.length === 0 ? (
        <p className="muted">
          The provider has not said which lines this payout paid out yet (they come with its settlement report).
        </p>
      ) : (
        <TableScroll label="Lines of the payout">
          <table className="data" data-testid="payout-lines">
            <TableHead
              columns={[
                "Line",
                "Reference",
                "Kind",
                "At (UTC)",
                num("Their gross"),
                num("Their fee"),
                num("Our gross"),
                num("Our fee"),
                "Both sides",
              ]}
            />
            <tbody>
              {lines.map((l) => (
                <tr key={l.lineId} className={l.agrees ? undefined : "tone-bad"}>
                  <td className="mono">{l.lineId}</td>
                  <td className="mono">{l.reference}</td>
                  <td>{l.kind.toLowerCase().replace("_", " ")}</td>
                  <td>{utc(l.occurredAt)}</td>
                  <td className="num">{formatMoney(l.theirGross, l.currency)}</td>
                  <td className="num">{formatMoney(l.theirFee, l.currency)}</td>
                  <td className="num">{formatMoney(l.ourGross, l.currency)}</td>
                  <td className="num">{formatMoney(l.ourFee, l.currency)}</td>
                  <td>{l.agrees ? "agrees" : "differs"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
