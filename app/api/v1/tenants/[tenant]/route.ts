// GET /api/v1/tenants/{tenant}: the tenant, if the caller may see it.
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = withTenant({}, async ({ tenant, principal }) => json({ tenant, role: principal.role }));
