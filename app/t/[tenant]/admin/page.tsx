// Admin: this tenant's provider secrets, alert channels and retention of raw bodies, then users and tenants (global).
import { AlertChannelsAdmin, type ChannelsData } from "@/components/admin/alert-channels-admin";
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
        <a href="#secrets-h">Secrets for {tenant.name}</a> <a href="#alert-channels-h">Alert channels</a>{" "}
        <a href="#retention-h">Retention</a> <a href="#users-h">Users</a> <a href="#tenants-h">Tenants</a>
      </nav>
      <SecretsAdmin tenant={slug} initial={plain({ endpoints, providers: supportedProviders() }) as EndpointsData} />
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
