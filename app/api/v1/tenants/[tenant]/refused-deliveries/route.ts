// GET /api/v1/tenants/{tenant}/refused-deliveries: deliveries the acknowledgement refused
// (a signature that did not verify), newest first, paginated by ?before=.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { RefusedQuery } from "@/lib/platform/query-params";
import { listRefused } from "@/lib/views/refused";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.events, query: RefusedQuery }, async ({ tenant, query }) => {
  const { before, ...filter } = query;
  return json(await listRefused({ tenantId: tenant.id, ...filter, beforeId: before }), {
    headers: { "cache-control": "no-store" },
  });
});
