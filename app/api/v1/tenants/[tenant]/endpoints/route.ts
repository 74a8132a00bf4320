// GET /api/v1/tenants/{tenant}/endpoints: provider endpoints and their secrets'
// metadata (label, dates, fingerprint); secret values are never returned again.
import { requireAccess } from "@/lib/auth/access";
import { accessError, handled, json } from "@/lib/platform/http";
import { supportedProviders } from "@/lib/providers";
import { listEndpoints } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: ["admin"] });
  if (!access.ok) return accessError(access);
  return json({ endpoints: await listEndpoints(access.tenant.id), providers: supportedProviders() });
});
