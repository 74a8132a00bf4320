// GET /api/v1/tenants/{tenant}: the tenant, if the caller may see it.
import { requireAccess } from "@/lib/auth/access";
import { accessError, handled, json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant });
  if (!access.ok) return accessError(access);
  return json({ tenant: access.tenant, role: access.principal.role });
});
