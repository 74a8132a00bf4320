// GET /api/v1/tenants/{tenant}/audit: who did what, when and why; newest first.
import { listAudit } from "@/lib/admin/audit";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { AuditQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: SECTION_ROLES.audit, query: AuditQuery },
  async ({ tenant, principal, query }) => {
    const { scope, before, ...filter } = query;
    // Entries tied to no tenant (sign-ins, admin users) are for admins only.
    const includeGlobal = scope === "all" && principal.role === "admin" && principal.kind === "user";
    return json(await listAudit({ tenantId: tenant.id, includeGlobal, beforeId: before, ...filter }));
  },
);
