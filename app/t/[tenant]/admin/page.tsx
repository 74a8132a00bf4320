// Admin: this tenant's provider secrets, matching rules, alert channels and retention of raw bodies, then users and tenants (global).
import { AlertChannelsAdmin, type ChannelsData } from "@/components/admin/alert-channels-admin";
import { MatchRulesAdmin, type MatchRulesData } from "@/components/admin/match-rules-admin";
import { RetentionAdmin } from "@/components/admin/retention-admin";
import { SecretsAdmin, type EndpointsData } from "@/components/admin/secrets-admin";
import { TenantsAdmin, type TenantsData } from "@/components/admin/tenants-admin";
import { UsersAdmin, type UsersData } from "@/components/admin/users-admin";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { plain } from "@/lib/platform/http";
import { supportedProviders } from "@/lib/providers";
import { listEndpoints, listTenants, rawBodyRetention } from "@/lib/admin/tenants";
import { listChannels } from "@/lib/alerts/channels";
import { listUsers } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

export default async function AdminPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "admin");
  if (!allowed) return <NoAccess role={principal.role} section="Admin" />;
  const [endpoints, channels, users, tenants, retention] = await Promise.all([
    listEndpoints(tenant.id),
    listChannels(tenant.id),
    listUsers(),
    listTenants(),
    rawBodyRetention(tenant.id),
  ]);
  return (
    <>
      <h1>Admin</h1>
      <nav aria-label="Admin sections" className="subnav">
        <a href="#secrets-h">Secrets for {tenant.name}</a> <a href="#match-rules-h">Matching rules</a>{" "}
        <a href="#alert-channels-h">Alert channels</a> <a href="#retention-h">Retention</a> <a href="#users-h">Users</a>{" "}
        <a href="#tenants-h">Tenants</a>
      </nav>
      <SecretsAdmin tenant={slug} initial={plain({ endpoints, providers: supportedProviders() }) as EndpointsData} />
      <MatchRulesAdmin tenant={slug} initial={plain({ endpoints }) as MatchRulesData} />
      <AlertChannelsAdmin tenant={slug} initial={plain({ channels }) as ChannelsData} />
      <RetentionAdmin
        tenant={slug}
        initial={{
          rawBodyRetentionDays: retention.rawBodyRetentionDays,
          rawBodiesPurgedBefore: retention.rawBodiesPurgedBefore?.toISOString() ?? null,
        }}
      />
      <UsersAdmin initial={plain({ users }) as UsersData} tenants={tenants.map((t) => t.slug)} />
      <TenantsAdmin initial={plain({ tenants }) as TenantsData} />
    </>
  );
}
