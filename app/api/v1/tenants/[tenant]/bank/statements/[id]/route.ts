// GET /api/v1/tenants/{tenant}/bank/statements/{id}: one statement, its counts, and
// the reconciliation runs its import made (one per provider, with the rules used).
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { getStatement } from "@/lib/bank/statements";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.bank, params: { id: bigintId } }, async ({ tenant, params }) => {
  const detail = await getStatement(tenant.id, params.id);
  if (!detail) return jsonError(404, "not_found", `No bank statement ${params.id} in tenant ${tenant.slug}`);
  return json(detail, { headers: { "cache-control": "no-store" } });
});
