// GET /api/v1/tenants/{tenant}/cases/{id}: one case with its evidence side by
// side (the raw webhook, our postings, the provider's settlement line or its
// absence), its proposals and approvals, and the correction it would post.
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { getCase } from "@/lib/cases/cases";
import { accessError, handled, json, jsonError, parseInput } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: SECTION_ROLES.cases });
  if (!access.ok) return accessError(access);
  const caseId = parseInput(bigintId, id);
  if (!caseId.ok) return caseId.response;
  const detail = await getCase(access.tenant.id, caseId.value);
  if (!detail) return jsonError(404, "not_found", `No case ${id} in tenant ${tenant}`);
  return json(detail, { headers: { "cache-control": "no-store" } });
});
