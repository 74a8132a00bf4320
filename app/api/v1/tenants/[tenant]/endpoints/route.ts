// GET /api/v1/tenants/{tenant}/endpoints: provider endpoints and their secrets'
// metadata (label, dates, fingerprint); secret values are never returned again.
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";
import { supportedProviders } from "@/lib/providers";
import { listEndpoints } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: ["admin"] }, async ({ tenant }) =>
  json({ endpoints: await listEndpoints(tenant.id), providers: supportedProviders() }),
);
