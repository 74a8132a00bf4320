// Overview: step 7's rate made visible (discrepancies per day per provider, a
// 7-day average and the verdict on its direction) beside what ops watch. The
// server renders the first paint; the client polls the same JSON API after.
import { OverviewDashboard, type OverviewData } from "@/components/overview/overview-dashboard";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayUse } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { plain } from "@/lib/platform/http";
import { overview } from "@/lib/views/overview";

export const dynamic = "force-dynamic";

export default async function Overview({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "overview");
  if (!allowed) return <NoAccess role={principal.role} section="Overview" />;
  const data = await overview(tenant.id, { days: 30, staleMs: config().TALLY_STALE_CLAIM_MS });
  const links = {
    claims: mayUse(principal.role, "claims"),
    cases: mayUse(principal.role, "cases"),
    reconciliation: mayUse(principal.role, "reconciliation"),
  };
  return (
    <>
      <h1>
        Overview <span className="muted subtitle">{tenant.name}</span>
      </h1>
      <OverviewDashboard tenant={slug} initial={plain(data) as OverviewData} links={links} />
    </>
  );
}
