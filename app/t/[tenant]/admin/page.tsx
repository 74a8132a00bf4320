// Admin: this tenant's provider secrets and alert channels, then users and tenants (global).
import { AlertChannelsAdmin, type ChannelsData } from "@/components/admin/alert-channels-admin";
import { SecretsAdmin, type EndpointsData } from "@/components/admin/secrets-admin";
import { TenantsAdmin, type TenantsData } from "@/components/admin/tenants-admin";
import { UsersAdmin, type UsersData } from "@/components/admin/users-admin";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { plain } from "@/lib/platform/http";
import { supportedProviders } from "@/lib/providers";
import { listEndpoints, listTenants } from "@/lib/admin/tenants";
import { listChannels } from "@/lib/alerts/channels";
import { listUsers } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

export default async function AdminPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "admin");
  if (!allowed) return <NoAccess role={principal.role} section="Admin" />;
  const [endpoints, channels, users, tenants] = await Promise.all([
    listEndpoints(tenant.id),
    listChannels(tenant.id),
    listUsers(),
    listTenants(),
  ]);
  return (
    <>
      <h1>Admin</h1>
      <nav aria-label="Admin sections" className="subnav">
        <a href="#secrets-h">Secrets for {tenant.name}</a> <a href="#alert-channels-h">Alert channels</a>{" "}
        <a href="#users-h">Users</a> <a href="#tenants-h">Tenants</a>
      </nav>
      <SecretsAdmin tenant={slug} initial={plain({ endpoints, providers: supportedProviders() }) as EndpointsData} />
      <AlertChannelsAdmin tenant={slug} initial={plain({ channels }) as ChannelsData} />
      <UsersAdmin initial={plain({ users }) as UsersData} tenants={tenants.map((t) => t.slug)} />
      <TenantsAdmin initial={plain({ tenants }) as TenantsData} />
    </>
  );
}
