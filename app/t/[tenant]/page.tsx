// Overview: what has arrived for this tenant, by status. The worker's and
// reconciliation's own figures arrive with them.
import Link from "next/link";
import { EmptyState, NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { prisma } from "@/lib/db";

export const dynamic = "force-dynamic";

export default async function Overview({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "overview");
  if (!allowed) return <NoAccess role={principal.role} section="Overview" />;
  const since = new Date(Date.now() - 24 * 3_600_000);
  const counts = await prisma.rawEvent.groupBy({ by: ["status"], where: { tenantId: tenant.id, receivedAt: { gte: since } }, _count: { _all: true } });
  const total = counts.reduce((s, c) => s + c._count._all, 0);
  return (
    <>
      <h1>{tenant.name}</h1>
      <h2>Events in the last 24 hours</h2>
      {total === 0 ? (
        <EmptyState title="No events in the last 24 hours">
          <p>
            Point the provider’s webhooks at <code>/api/webhooks/{tenant.slug}/&lt;provider&gt;</code>
            {principal.role === "admin" ? <> and add its signing secret under <Link href={`/t/${slug}/admin`}>Admin</Link></> : null}.
          </p>
        </EmptyState>
      ) : (
        <ul className="stat-row">
          {counts.map((c) => (
            <li key={c.status} className="stat">
              <Link href={`/t/${slug}/events?status=${c.status}`}>
                <span className="stat-value">{c._count._all}</span>
                <span className="stat-label">{c.status.toLowerCase()}</span>
              </Link>
            </li>
          ))}
        </ul>
      )}
      <p className="muted">Claim, posting and reconciliation figures arrive here with the worker and reconciliation.</p>
    </>
  );
}
