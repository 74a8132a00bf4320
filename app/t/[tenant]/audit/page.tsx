// Audit log: who did what, when and why, for this tenant (admins may include
// entries tied to no tenant: sign-ins, admin users). Read-only.
import { ExportForm } from "@/components/export-form";
import { DayRange, formValues, type Search } from "@/components/filter-fields";
import { EmptyState, NoAccess, NothingMatches } from "@/components/states";
import { listAudit } from "@/lib/admin/audit";
import { requirePage } from "@/lib/auth/page-access";
import { AuditQuery } from "@/lib/platform/query-params";
import { TableScroll } from "@/components/table-scroll";
import { TableHead } from "@/components/table-head";
import { NextPage } from "@/components/pager";

export const dynamic = "force-dynamic";

export default async function AuditPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Search>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "audit");
  if (!allowed) return <NoAccess role={principal.role} section="Audit log" />;
  const raw = await formValues(searchParams);
  const q = AuditQuery.safeParse(raw);
  const isAdmin = principal.role === "admin";
  const page = q.success
    ? await listAudit({
        tenantId: tenant.id,
        includeGlobal: isAdmin && q.data.scope === "all",
        action: q.data.action,
        actor: q.data.actor,
        from: q.data.from,
        to: q.data.to,
        limit: q.data.limit,
        beforeId: q.data.before,
      })
    : null;
  const keep = new URLSearchParams(Object.entries(raw).filter(([k, v]) => k !== "before" && v !== ""));
  return (
    <>
      <h1>Audit log</h1>
      <form method="get" className="filters" role="search" aria-label="Filter the audit log">
        <label>
          Action starts with
          <input name="action" defaultValue={raw.action ?? ""} placeholder="secret." />
        </label>
        <label>
          Actor contains
          <input name="actor" defaultValue={raw.actor ?? ""} placeholder="email" />
        </label>
        <DayRange values={raw} />
        {isAdmin && (
          <label>
            Scope
            <select name="scope" defaultValue={raw.scope ?? "tenant"}>
              <option value="tenant">This tenant</option>
              <option value="all">This tenant and global (sign-ins, users)</option>
            </select>
          </label>
        )}
        <button type="submit">Filter</button>
      </form>
      {!q.success && (
        <p role="alert" className="error">
          Fix the filter: {q.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}
        </p>
      )}
      {page &&
        page.entries.length === 0 &&
        (raw.action || raw.actor || raw.from || raw.to ? (
          <NothingMatches what="audit entries" clearHref={`/t/${slug}/audit`}>
            {isAdmin && raw.scope !== "all" ? (
              <p>Sign-ins and user changes are global: choose &ldquo;This tenant and global&rdquo; to include them.</p>
            ) : null}
          </NothingMatches>
        ) : (
          <EmptyState title="No audit entries yet">
            <p>
              Every change a person makes (secrets, users, reprocessing, case decisions, reconciliation runs) is
              recorded here
              {isAdmin
                ? "; sign-ins and user changes are global: choose \u201cThis tenant and global\u201d to include them"
                : ""}
              .
            </p>
          </EmptyState>
        ))}
      {page && page.entries.length > 0 && (
        <TableScroll label="Audit entries">
          <table className="table">
            <TableHead columns={["When (UTC)", "Who", "What", "Subject", "Why", "Details"]} />
            <tbody>
              {page.entries.map((a) => (
                <tr key={a.id.toString()}>
                  <td>
                    <time dateTime={a.at.toISOString()}>{a.at.toISOString().slice(0, 19).replace("T", " ")}</time>
                  </td>
                  <td>
                    {a.actorLabel} <span className="muted">({a.actorType.toLowerCase().replace("_", " ")})</span>
                  </td>
                  <td className="mono">{a.action}</td>
                  <td className="mono">
                    {a.subjectType} {a.subjectId.slice(0, 12)}
                  </td>
                  <td>{a.reason ?? ""}</td>
                  <td className="mono wrap small">
                    {JSON.stringify(a.details) === "{}" ? "" : JSON.stringify(a.details)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {page?.nextBefore && (
        <NextPage
          href={`/t/${slug}/audit?${new URLSearchParams({ ...Object.fromEntries(keep), before: page.nextBefore.toString() })}`}
        >
          Older →
        </NextPage>
      )}
      <h2>Export</h2>
      <ExportForm tenant={slug} kind="audit" what="the audit log" />
    </>
  );
}
