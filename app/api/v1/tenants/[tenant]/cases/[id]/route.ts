// GET /api/v1/tenants/{tenant}/cases/{id}: one case with its evidence side by
// side (the raw webhook, our postings, the provider's settlement line or its
// absence), its proposals and approvals, and the correction it would post.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { getCase } from "@/lib/cases/cases";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.cases, params: { id: bigintId } }, async ({ tenant, params }) => {
  const detail = await getCase(tenant.id, params.id);
  if (!detail) return jsonError(404, "not_found", `No case ${params.id} in tenant ${tenant.slug}`);
  return json(detail, { headers: { "cache-control": "no-store" } });
});
