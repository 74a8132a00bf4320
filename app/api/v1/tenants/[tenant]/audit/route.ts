// GET /api/v1/tenants/{tenant}/audit: who did what, when and why; newest first.
import { listAudit } from "@/lib/admin/audit";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { AuditQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.audit });
  if (!access.ok) return accessError(access);
  const q = parseInput(AuditQuery, queryOf(request));
  if (!q.ok) return q.response;
  const { scope, before, ...filter } = q.value;
  // Entries tied to no tenant (sign-ins, admin users) are for admins only.
  const includeGlobal = scope === "all" && access.principal.role === "admin" && access.principal.kind === "user";
  return json(await listAudit({ tenantId: access.tenant.id, includeGlobal, beforeId: before, ...filter }));
});
