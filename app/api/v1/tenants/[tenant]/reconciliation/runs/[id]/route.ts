// GET /api/v1/tenants/{tenant}/reconciliation/runs/{id}: one run and the
// discrepancies it saw, by bucket. Matched lines are a count only.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { getRun } from "@/lib/recon/runs";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: SECTION_ROLES.reconciliation, params: { id: bigintId } },
  async ({ tenant, params }) => {
    const detail = await getRun(tenant.id, params.id);
    if (!detail) return jsonError(404, "not_found", `No reconciliation run ${params.id} in tenant ${tenant.slug}`);
    return json(detail, { headers: { "cache-control": "no-store" } });
  },
);
