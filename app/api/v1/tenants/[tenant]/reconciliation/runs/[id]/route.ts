// GET /api/v1/tenants/{tenant}/reconciliation/runs/{id}: one run and the
// discrepancies it saw, by bucket. Matched lines are a count only.
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { accessError, handled, json, jsonError, parseInput } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { getRun } from "@/lib/recon/runs";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: SECTION_ROLES.reconciliation });
  if (!access.ok) return accessError(access);
  const runId = parseInput(bigintId, id);
  if (!runId.ok) return runId.response;
  const detail = await getRun(access.tenant.id, runId.value);
  if (!detail) return jsonError(404, "not_found", `No reconciliation run ${id} in tenant ${tenant}`);
  return json(detail, { headers: { "cache-control": "no-store" } });
});
