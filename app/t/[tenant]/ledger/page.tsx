// Ledger: the tenant's accounts and balances. Customer accounts are
// credit-normal and shown as −amount (see components/money.ts).
import Link from "next/link";
import { displayBalance, formatMoney } from "@/components/money";
import { EmptyState, NoAccess, NothingMatches } from "@/components/states";
import { listAccounts } from "@/lib/ledger/accounts";
import { requirePage } from "@/lib/auth/page-access";
import { AccountQuery } from "@/lib/platform/query-params";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { NextPage } from "@/components/pager";

export const dynamic = "force-dynamic";

export default async function LedgerPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "ledger");
  if (!allowed) return <NoAccess role={principal.role} section="Ledger" />;
  const raw = await searchParams;
  const q = AccountQuery.safeParse({ kind: raw.kind, code: raw.code, after: raw.after });
  const page = q.success
    ? await listAccounts({
        tenantId: tenant.id,
        kind: q.data.kind,
        code: q.data.code,
        limit: q.data.limit,
        afterId: q.data.after,
      })
    : null;
  return (
    <>
      <h1>Ledger</h1>
      <form method="get" className="filters" role="search" aria-label="Filter accounts">
        <label>
          Account code contains
          <input name="code" defaultValue={raw.code ?? ""} placeholder="customer:" />
        </label>
        <label>
          Kind
          <select name="kind" defaultValue={raw.kind ?? ""}>
            <option value="">Any</option>
            <option value="CUSTOMER">customer</option>
            <option value="PROVIDER_CLEARING">provider clearing</option>
            <option value="CORRECTIONS">corrections</option>
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <p className="muted">
        Balances as people read them: a customer balance is what we owe the customer (the ledger stores it as a credit);
        a clearing balance is what the provider owes us.
      </p>
      {!q.success && (
        <p role="alert" className="error">
          Fix the filter: {q.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}
        </p>
      )}
      {page && page.accounts.length === 0 && (raw.code || raw.kind) && (
        <NothingMatches what="accounts" clearHref={`/t/${slug}/ledger`}>
          <p>
            No account
            {raw.code ? (
              <>
                {" "}
                whose code contains <code>{raw.code}</code>
              </>
            ) : null}
            {raw.kind ? <> of kind {raw.kind.toLowerCase().replace("_", " ")}</> : null}.
          </p>
        </NothingMatches>
      )}
      {page && page.accounts.length === 0 && !raw.code && !raw.kind && (
        <EmptyState title="No accounts yet">
          <p>
            Accounts appear when the worker posts this tenant’s first payment. Check{" "}
            <Link href={`/t/${slug}/events`}>Events</Link> for deliveries waiting or failed.
          </p>
        </EmptyState>
      )}
      {page && page.accounts.length > 0 && (
        <TableScroll label="Accounts">
          <table className="table">
            <TableHead columns={["Account", "Kind", "Name", num("Balance")]} />
            <tbody>
              {page.accounts.map((a) => (
                <tr key={a.id.toString()}>
                  <td>
                    <Link href={`/t/${slug}/ledger/${a.id}`}>{a.code}</Link>
                  </td>
                  <td>{a.kind.toLowerCase().replace("_", " ")}</td>
                  <td>{a.name ?? ""}</td>
                  <td className="num">
                    {a.balances.length === 0
                      ? "—"
                      : a.balances.map((b) => (
                          <div key={b.currency}>{formatMoney(displayBalance(a.kind, b.amount), b.currency)}</div>
                        ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {page?.nextAfter && (
        <NextPage
          href={`/t/${slug}/ledger?${new URLSearchParams({ ...(raw.code && { code: raw.code }), ...(raw.kind && { kind: raw.kind }), after: page.nextAfter.toString() })}`}
        >
          More accounts →
        </NextPage>
      )}
    </>
  );
}
