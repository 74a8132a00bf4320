// One account: balances and its ledger entries, newest first, each with its posting.
import Link from "next/link";
import { displayBalance, formatMoney } from "@/components/money";
import { DebitCreditCells } from "@/components/debit-credit";
import { getAccount, listEntries } from "@/lib/ledger/accounts";
import { bigintId } from "@/lib/platform/query-params";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";
import { NextPage } from "@/components/pager";

export const dynamic = "force-dynamic";

export default async function AccountPage({
  params,
  searchParams,
}: {
  params: DetailParams;
  searchParams: Promise<{ before?: string }>;
}) {
  const open = await openDetail(params, "ledger", "Ledger", getAccount);
  if (!open.ok) return open.page;
  const { slug, id, detail: account } = open.opened;
  const before = bigintId.safeParse((await searchParams).before ?? "");
  const page = await listEntries(account.id, { beforeId: before.success ? before.data : undefined });
  return (
    <>
      <p>
        <Link href={`/t/${slug}/ledger`}>← Ledger</Link>
      </p>
      <h1>{account.code}</h1>
      <p className="muted">
        {account.kind.toLowerCase().replace("_", " ")}
        {account.kind === "CUSTOMER" ? " · credit-normal: balance shown as what we owe the customer" : ""}
      </p>
      <ul className="stat-row">
        {account.balances.length === 0 ? (
          <li className="muted">No balance yet.</li>
        ) : (
          account.balances.map((b) => (
            <li key={b.currency} className="stat">
              <span className="stat-value">{formatMoney(displayBalance(account.kind, b.amount), b.currency)}</span>
              <span className="stat-label">{b.currency} balance</span>
            </li>
          ))
        )}
      </ul>
      <h2>Entries</h2>
      {page.entries.length === 0 ? (
        <p className="muted">No entries on this account.</p>
      ) : (
        <TableScroll label="Entries">
          <table className="table">
            <TableHead columns={["Entry", "Occurred", "Posting", "Reference", num("Debit"), num("Credit")]} />
            <tbody>
              {page.entries.map((en) => (
                <tr key={en.id.toString()}>
                  <td>#{en.id.toString()}</td>
                  <td>
                    <time dateTime={en.posting.occurredAt.toISOString()}>
                      {en.posting.occurredAt.toISOString().slice(0, 19).replace("T", " ")}
                    </time>
                  </td>
                  <td>
                    #{en.posting.id.toString()} {en.posting.kind.toLowerCase()}: {en.posting.description}
                  </td>
                  <td className="mono">
                    {en.posting.processedEvent ? (
                      <Link href={`/t/${slug}/events/${en.posting.processedEvent.rawEventId}`}>
                        {en.posting.providerReference ?? "event"}
                      </Link>
                    ) : (
                      (en.posting.providerReference ?? "—")
                    )}
                  </td>
                  <DebitCreditCells amount={en.amount} currency={en.currency} />
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {page.nextBefore && (
        <NextPage href={`/t/${slug}/ledger/${id}?before=${page.nextBefore}`}>Older entries →</NextPage>
      )}
    </>
  );
}
